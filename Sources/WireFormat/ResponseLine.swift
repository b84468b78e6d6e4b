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
        switch self {
        case .accepted(let id, let seq), .duplicate(let id, let seq):
            out.append(contentsOf: #"{"id":"#.utf8)
            JSONStringLiteral.append(id, to: &out)
            out.append(contentsOf: #","status":""#.utf8)
            out.append(contentsOf: (isDuplicate ? "duplicate" : "accepted").utf8)
            out.append(contentsOf: #"","seq":"#.utf8)
            out.append(contentsOf: String(seq).utf8)
            out.append(contentsOf: "}\n".utf8)
        case .rejected(let id, let error):
            out.append(contentsOf: #"{"id":"#.utf8)
            if let id { JSONStringLiteral.append(id, to: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: #","status":"rejected","error":{"code":""#.utf8)
            out.append(contentsOf: error.code.rawValue.utf8)
            out.append(contentsOf: #"","message":"#.utf8)
            JSONStringLiteral.append(error.message, to: &out)
            if let field = error.field {
                out.append(contentsOf: #","field":"#.utf8)
                JSONStringLiteral.append(field, to: &out)
            }
            out.append(contentsOf: "}}\n".utf8)
        }
        return out
    }

    private var isDuplicate: Bool {
        if case .duplicate = self { return true }
        return false
    }
}
