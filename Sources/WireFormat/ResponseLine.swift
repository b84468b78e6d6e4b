import OfferTrackDomain

/// The daemon's answer to one input line (SPEC section 2), encoded as one JSON line.
public enum ResponseLine: Sendable, Equatable {
    case accepted(id: String, seq: Int64)
    case duplicate(id: String, seq: Int64)
    case rejected(id: String?, RecordError)

    /// The response as UTF-8 bytes, `\n` included.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(96)
        encode(into: &out)
        return out
    }

    /// Appends the response as UTF-8 bytes, `\n` included, to `out` (no array of its own to allocate).
    public func encode(into out: inout [UInt8]) {
        switch self {
        case .accepted(let id, let seq), .duplicate(let id, let seq):
            Self.append(#"{"id":"#, to: &out)
            JSONStringLiteral.append(id, to: &out)
            Self.append(isDuplicate ? #","status":"duplicate","seq":"# : #","status":"accepted","seq":"#, to: &out)
            Self.appendDecimal(seq, to: &out)
            Self.append("}\n", to: &out)
        case .rejected(let id, let error):
            Self.append(#"{"id":"#, to: &out)
            if let id { JSONStringLiteral.append(id, to: &out) } else { Self.append("null", to: &out) }
            Self.append(#","status":"rejected","error":{"code":""#, to: &out)
            out.append(contentsOf: error.code.rawValue.utf8)
            Self.append(#"","message":"#, to: &out)
            JSONStringLiteral.append(error.message, to: &out)
            if let field = error.field {
                Self.append(#","field":"#, to: &out)
                JSONStringLiteral.append(field, to: &out)
            }
            Self.append("}}\n", to: &out)
        }
    }

    private var isDuplicate: Bool {
        if case .duplicate = self { return true }
        return false
    }

    /// Appends a literal's UTF-8 bytes in one copy.
    private static func append(_ literal: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    /// Appends `value` in decimal, as `String(value)` writes it, without making that string.
    private static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // UInt64.max has 20 digits; they come least significant first.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }
}
