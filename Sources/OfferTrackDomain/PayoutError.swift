/// Why a payout statement cannot be computed: a sum that does not fit in 64 bits, or an export or statement file
/// that cannot be read.
public enum PayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sum of money outside ±(2^63 − 1) minor units.
    case overflow(String)
    /// A stored file that is not what offertrack writes.
    case unreadable(file: String, reason: String)

    public var description: String {
        switch self {
        case .overflow(let what): "\(what) does not fit in a 64-bit amount of minor units"
        case .unreadable(let file, let reason): "\(file) cannot be read: \(reason)"
        }
    }
}

extension Int64 {
    /// `self + other`, or `PayoutError.overflow(what)`.
    func adding(_ other: Int64, _ what: @autoclosure () -> String) throws(PayoutError) -> Int64 {
        do {
            return try Money.sum(self, other)
        } catch {
            throw .overflow(what())
        }
    }
}
