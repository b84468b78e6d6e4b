// Compiled together with Sources/OfferTrackDomain and Sources/WireFormat into one module by scripts/fuzz (no import
// needed).

/// libFuzzer entry for `JSONParser`, `JSONContent` and `RecordValidator`: one input is one line. Nothing may
/// crash; the validator's fused path (the line scanned into its fields) answers as its tree path (the line parsed,
/// then validated); a parsed value has the same content as itself and as its re-encoding with members reversed and
/// whitespace added; the verdict does not depend on member order or whitespace; a valid record re-validated from
/// its own line is the same record.
@_cdecl("LLVMFuzzerTestOneInput")
public func validatorFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let line = Array(UnsafeBufferPointer(start: data, count: size))
    let verdict = RecordValidator.validate(line)
    let treeVerdict: LineVerdict
    do {
        treeVerdict = RecordValidator.validate(try JSONParser.parse(line))
    } catch {
        treeVerdict = .rejected(id: nil, error)
    }
    precondition(verdict == treeVerdict, "the fused path answers \(verdict), the tree path \(treeVerdict)")
    guard let value = try? JSONParser.parse(line) else {
        if case .valid = verdict { preconditionFailure("a line that is not JSON was valid") }
        return 0
    }
    precondition(JSONContent.isSame(value, value), "a value differs from itself")

    let reencoded = Array(ReversedEncoder.encode(value).utf8)
    guard let reparsed = try? JSONParser.parse(reencoded) else {
        preconditionFailure("the re-encoding does not parse: \(String(decoding: reencoded, as: UTF8.self))")
    }
    precondition(JSONContent.isSame(value, reparsed), "the re-encoding has other content")
    precondition(JSONContent.isSame(reparsed, value), "isSame is not symmetric")
    precondition(RecordValidator.validate(reencoded) == verdict, "the verdict depends on member order")

    if case .valid(let record) = verdict {
        precondition(RecordValidator.validate(line) == .valid(record), "re-validating gave another record")
        precondition(RecordValidator.isValidID(record.id), "a valid record has an invalid id")
    }
    return 0
}

/// Writes a JSON value back as text with object members in reverse order and extra whitespace.
enum ReversedEncoder {
    static func encode(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let flag): return flag ? "true" : "false"
        case .number(let number): return number.literal
        case .string(let string): return JSONStringLiteral.quote(string)
        case .array(let elements): return "[ " + elements.map(encode).joined(separator: " ,\t") + " ]"
        case .object(let object):
            let members = object.members.reversed().map { JSONStringLiteral.quote($0.key) + " : " + encode($0.value) }
            return "{\r\n" + members.joined(separator: ",\n ") + "}"
        }
    }
}
