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
    /// `\n` is read too. The record is valid only during the call. Throws `Malformed` for bytes that are not
    /// CSV, or what `body` throws.
    public static func forEachRecord(in bytes: [UInt8], _ body: (CSVRecord) throws -> Void) throws {
        try bytes.withUnsafeBufferPointer { buffer in
            var fields: [CSVRecord.Field] = []
            fields.reserveCapacity(16)
            var index = 0
            var line = 1
            while index < buffer.count {
                let recordLine = line
                fields.removeAll(keepingCapacity: true)
                index = try readRecord(buffer, from: index, line: &line, into: &fields)
                try fields.withUnsafeBufferPointer { found in
                    try body(CSVRecord(bytes: buffer, fields: found, line: recordLine))
                }
            }
        }
    }

    /// Reads the record starting at `start` into `fields`; returns where the next one starts.
    private static func readRecord(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, line: inout Int, into fields: inout [CSVRecord.Field]
    ) throws -> Int {
        let recordLine = line
        let end = bytes.count
        var index = start
        while true {
            if index < end, bytes[index] == quote {
                // A quoted field: up to the quote not followed by another.
                let fieldStart = index + 1
                var cursor = fieldStart
                var doubled = false
                while true {
                    guard cursor < end else {
                        throw Malformed(line: recordLine, reason: "a quoted field is never closed")
                    }
                    let byte = bytes[cursor]
                    if byte == quote {
                        guard cursor + 1 < end, bytes[cursor + 1] == quote else { break }
                        doubled = true
                        cursor += 2
                        continue
                    }
                    if byte == newline { line += 1 }
                    cursor += 1
                }
                fields.append(CSVRecord.Field(start: fieldStart, end: cursor, quoted: true, doubled: doubled))
                index = cursor + 1
            } else {
                let fieldStart = index
                while index < end {
                    let byte = bytes[index]
                    if byte == comma || byte == newline { break }
                    if byte == quote {
                        throw Malformed(line: recordLine, reason: "a quote inside an unquoted field")
                    }
                    index += 1
                }
                var fieldEnd = index
                if index < end, bytes[index] == newline, fieldEnd > fieldStart, bytes[fieldEnd - 1] == carriageReturn {
                    fieldEnd -= 1
                }
                fields.append(CSVRecord.Field(start: fieldStart, end: fieldEnd, quoted: false, doubled: false))
            }
            guard index < end else { return index }
            switch bytes[index] {
            case comma: index += 1
            case newline:
                line += 1
                return index + 1
            case carriageReturn where index + 1 < end && bytes[index + 1] == newline:
                line += 1
                return index + 2
            default:
                throw Malformed(line: recordLine, reason: "text after a quoted field's closing quote")
            }
        }
    }

    private static let quote = UInt8(ascii: "\"")
    private static let comma = UInt8(ascii: ",")
    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
}

/// One record found by `CSVReader`: its fields' places in the bytes, decoded on demand. Valid only inside the
/// reader's call.
public struct CSVRecord {
    /// Where a field's content is (inside the quotes for a quoted one).
    struct Field {
        let start: Int
        let end: Int
        let quoted: Bool
        /// Whether it holds doubled quotes to undouble.
        let doubled: Bool
    }

    let bytes: UnsafeBufferPointer<UInt8>
    let fields: UnsafeBufferPointer<Field>
    /// The 1-based line the record starts on.
    public let line: Int

    /// How many fields the record has.
    public var count: Int { fields.count }

    /// Calls `body` with field `index`'s bytes, quotes removed and doubled quotes undoubled.
    public func withBytes<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let field = fields[index]
        let raw = UnsafeBufferPointer(rebasing: bytes[field.start..<field.end])
        guard field.doubled else { return try body(raw) }
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
        return try decoded.withUnsafeBufferPointer(body)
    }

    /// Field `index` as a string.
    public func text(_ index: Int) -> String {
        withBytes(index) { String(decoding: $0, as: UTF8.self) }
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
