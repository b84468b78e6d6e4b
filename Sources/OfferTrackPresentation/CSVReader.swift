/// Reads CSV written with SPEC section 7's quoting: records end in `\n` (an unquoted `\r\n` too); a field is
/// either bare or quoted, a quoted one may hold `,`, `"` (doubled), CR and LF.
///
/// The reader finds field boundaries in place and decodes a field only when asked, so that summing a month of
/// export files does not build a string per column.
public enum CSVReader {
    /// Why bytes are not CSV.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        /// The 1-based line the record starts on.
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// Calls `body` with each record of `bytes`, in order (the header included); a last record without its
    /// `\n` is read too. Throws `Malformed` for bytes that are not CSV, or what `body` throws.
    public static func forEachRecord(in bytes: [UInt8], _ body: (CSVRecord) throws -> Void) throws {
        var fields: [CSVRecord.Field] = []
        fields.reserveCapacity(16)
        var index = 0
        var line = 1
        let end = bytes.count
        while index < end {
            let recordLine = line
            fields.removeAll(keepingCapacity: true)
            var atRecordEnd = false
            while !atRecordEnd {
                if index < end, bytes[index] == quote {
                    // A quoted field: up to the quote not followed by another.
                    let start = index + 1
                    var cursor = start
                    var closed = false
                    while cursor < end {
                        if bytes[cursor] == quote {
                            if cursor + 1 < end, bytes[cursor + 1] == quote {
                                cursor += 2
                                continue
                            }
                            closed = true
                            break
                        }
                        if bytes[cursor] == newline { line += 1 }
                        cursor += 1
                    }
                    guard closed else {
                        throw Malformed(line: recordLine, reason: "a quoted field is never closed")
                    }
                    fields.append(CSVRecord.Field(start: start, end: cursor, quoted: true))
                    index = cursor + 1
                } else {
                    let start = index
                    while index < end, bytes[index] != comma, bytes[index] != newline {
                        if bytes[index] == quote {
                            throw Malformed(line: recordLine, reason: "a quote inside an unquoted field")
                        }
                        index += 1
                    }
                    var fieldEnd = index
                    if index < end, bytes[index] == newline, fieldEnd > start, bytes[fieldEnd - 1] == carriageReturn {
                        fieldEnd -= 1
                    }
                    fields.append(CSVRecord.Field(start: start, end: fieldEnd, quoted: false))
                }
                if index >= end {
                    atRecordEnd = true
                } else if bytes[index] == comma {
                    index += 1
                } else if bytes[index] == newline {
                    index += 1
                    line += 1
                    atRecordEnd = true
                } else if bytes[index] == carriageReturn, index + 1 < end, bytes[index + 1] == newline {
                    index += 2
                    line += 1
                    atRecordEnd = true
                } else {
                    throw Malformed(line: recordLine, reason: "text after a quoted field's closing quote")
                }
            }
            try body(CSVRecord(bytes: bytes, fields: fields, line: recordLine))
        }
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
}

/// One record found by `CSVReader`: its fields' places in the bytes, decoded on demand.
public struct CSVRecord {
    /// Where a field's content is (inside the quotes for a quoted one).
    struct Field {
        let start: Int
        let end: Int
        let quoted: Bool
    }

    let bytes: [UInt8]
    let fields: [Field]
    /// The 1-based line the record starts on.
    public let line: Int

    /// How many fields the record has.
    public var count: Int { fields.count }

    /// Field `index`'s bytes, quotes removed and doubled quotes undoubled.
    public func bytes(_ index: Int) -> ArraySlice<UInt8> {
        let field = fields[index]
        let raw = bytes[field.start..<field.end]
        guard field.quoted, raw.contains(UInt8(ascii: "\"")) else { return raw }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var skipNext = false
        for byte in raw {
            if skipNext {
                skipNext = false
                continue
            }
            decoded.append(byte)
            skipNext = byte == UInt8(ascii: "\"")
        }
        return decoded[...]
    }

    /// Field `index` as a string.
    public func text(_ index: Int) -> String {
        String(decoding: bytes(index), as: UTF8.self)
    }

    /// Field `index` as a decimal integer (an optional `-`, then digits, nothing else), or nil.
    public func int64(_ index: Int) -> Int64? {
        let field = fields[index]
        guard !field.quoted, field.end > field.start else { return nil }
        var cursor = field.start
        let negative = bytes[cursor] == UInt8(ascii: "-")
        if negative { cursor += 1 }
        guard cursor < field.end else { return nil }
        var value: Int64 = 0
        while cursor < field.end {
            let digit = bytes[cursor] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) =
                negative
                ? times.subtractingReportingOverflow(Int64(digit)) : times.addingReportingOverflow(Int64(digit))
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
            cursor += 1
        }
        return value
    }
}
