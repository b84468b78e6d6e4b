// TEMPORARY: replaced by the domain branch's parser and validator at merge.
public enum JSONParser {
    public static func parse(_ bytes: [UInt8]) throws(RecordError) -> JSONValue {
        throw RecordError(.invalidJSON, "stub")
    }
}
public enum JSONContent {
    public static func isSame(_ a: JSONValue, _ b: JSONValue) -> Bool { a == b }
}
public enum LineVerdict: Sendable, Equatable {
    case valid(Record)
    case rejected(id: String?, RecordError)
}
public enum RecordValidator {
    public static func validate(_ bytes: UnsafeRawBufferPointer) -> LineVerdict {
        .rejected(id: nil, RecordError(.invalidJSON, "stub"))
    }
}
