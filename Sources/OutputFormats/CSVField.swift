import OfferTrackDomain

/// CSV field quoting of SPEC section 7.
public enum CSVField {
    /// The field as written in a CSV line: quoted only when it contains `,`, `"`, CR or LF, with quotes doubled.
    public static func escape(_ value: String) -> String {
        var bytes: [UInt8] = []
        append(line: [value], to: &bytes)
        return String(decoding: bytes.dropLast(), as: UTF8.self)
    }

    /// One CSV line: the fields escaped, joined by commas, ending in `\n`.
    public static func line(_ fields: [String]) -> String {
        var bytes: [UInt8] = []
        append(line: fields, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends one CSV line (fields escaped, comma-separated, `\n`-terminated) as UTF-8 bytes.
    public static func append(line fields: [String], to bytes: inout [UInt8]) {
        for (index, field) in fields.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(field: field, to: &bytes)
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends one field, quoted only when it contains `,`, `"`, CR or LF, with quotes doubled.
    public static func append(field: String, to bytes: inout [UInt8]) {
        let utf8 = field.utf8
        guard utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else {
            bytes.append(contentsOf: utf8)
            return
        }
        bytes.append(UInt8(ascii: "\""))
        for byte in utf8 {
            bytes.append(byte)
            if byte == 0x22 { bytes.append(byte) }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
