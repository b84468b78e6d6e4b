import JSON
import OfferTrackDomain

/// A published payout month's figures as its manifest states them (SPEC 7.1): what the HTML report shows.
public struct PublishedPayouts: Sendable, Equatable {
    /// One currency's totals from the manifest's `totals`.
    public struct Total: Sendable, Equatable {
        public let currency: String
        public let payableMinor: Int64
        public let carriedMinor: Int64
    }

    /// `YYYY-MM`.
    public let month: String
    /// The first publication's time, as the manifest writes it.
    public let generatedAt: String
    /// In the manifest's order (by currency); empty when the statement has no lines.
    public let totals: [Total]

    /// Reads the manifest `bytes` of `month` as stored at its publication; `PayoutError.unreadable` when they are
    /// not a payout manifest.
    public init(month: String, manifest bytes: [UInt8]) throws(PayoutError) {
        let name = "payouts-\(month).manifest.json"
        guard case .object(let manifest) = try? JSONParser.parse(bytes),
            case .string(let generatedAt)? = manifest["generatedAt"],
            case .object(let totals)? = manifest["totals"]
        else { throw .unreadable(file: name, reason: "it is not a payout manifest") }
        self.month = month
        self.generatedAt = generatedAt
        self.totals = try totals.members.map { member throws(PayoutError) in
            guard case .object(let sums) = member.value, let payable = Self.integer(sums["payableMinor"]),
                let carried = Self.integer(sums["carriedMinor"])
            else { throw .unreadable(file: name, reason: "its totals for \(member.key) are not integers") }
            return Total(currency: member.key, payableMinor: payable, carriedMinor: carried)
        }
    }

    private static func integer(_ value: JSONValue?) -> Int64? {
        guard case .number(let number)? = value else { return nil }
        return number.int64Value
    }
}
