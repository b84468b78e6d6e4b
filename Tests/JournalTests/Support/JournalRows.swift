import SQLite

@testable import AttributionJoin

/// A journal's rows as text in a fixed order, to compare two journals or one before and after.
enum JournalRows {
    /// Every derived row and roll-up, as text, in a fixed order.
    static func derived(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        var rows: [String] = []
        for sql in [
            "SELECT r.id, d.ts, d.eligible FROM derived_presentations d JOIN records r USING (seq) ORDER BY 1",
            "SELECT u.user, \(DerivedTables.conversionColumns) FROM derived_conversions JOIN users u USING (k) ORDER BY id",
            "SELECT * FROM presentation_rollup WHERE presented != 0 OR eligible != 0 ORDER BY 1, 2, 3",
            "SELECT * FROM conversion_days WHERE conversions != 0 ORDER BY 1, 2, 3, 4, 5, 6, 7",
        ] {
            let statement = try connection.prepare(sql)
            while try statement.step() {
                rows.append((0..<statement.columnCount).map { statement.text($0) ?? "∅" }.joined(separator: "|"))
            }
        }
        return rows
    }

    /// The records' users and lines, and the derived rows, by record id.
    static func recordsAndDerived(_ path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let select = try connection.prepare("SELECT id, user, line FROM records ORDER BY id")
        var rows: [String] = []
        while try select.step() {
            rows.append("\(select.text(0) ?? "") \(select.text(1) ?? "") \(select.text(2) ?? "")")
        }
        return rows + (try derived(path))
    }
}
