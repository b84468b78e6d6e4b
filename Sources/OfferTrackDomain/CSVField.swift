/// CSV field quoting of SPEC section 7.
public enum CSVField {
    /// The field as written in a CSV line: quoted only when it contains `,`, `"`, CR or LF, with quotes doubled.
    public static func escape(_ value: String) -> String {
        let needsQuotes = value.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else { return value }
        var out = "\""
        for character in value.unicodeScalars {
            if character == "\"" { out += "\"\"" } else { out.unicodeScalars.append(character) }
        }
        return out + "\""
    }

    /// One CSV line: the fields escaped, joined by commas, ending in `\n`.
    public static func line(_ fields: [String]) -> String {
        fields.map(escape).joined(separator: ",") + "\n"
    }
}
