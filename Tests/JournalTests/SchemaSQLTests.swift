import Foundation
import SQLite
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore

/// docs/development/schema.sql is the schema a freshly migrated journal has: executed in an empty database, it
/// creates exactly the tables and indexes (and no trigger) that `Schema.migrations` leave, column for column.
@Suite struct SchemaSQLTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/development/schema.sql").path

    /// `sqlite_master` as `type name tbl_name sql` lines in name order, each statement `normalized`.
    static func master(of connection: Connection) throws -> [String] {
        let select = try connection.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name")
        defer { select.reset() }
        var rows: [String] = []
        while try select.step() {
            let columns = [select.text(0), select.text(1), select.text(2), select.text(3).map(normalized)]
            rows.append(columns.map { $0 ?? "NULL" }.joined(separator: " | "))
        }
        return rows
    }

    /// `sql` with its layout taken out: whitespace collapsed, none around parentheses and commas, and identifiers
    /// unquoted. A migration's `ALTER TABLE ... ADD COLUMN` leaves its column after `\n    , ` before the closing
    /// parenthesis, and `RENAME TO` quotes the new name; schema.sql is written for people, not in that layout.
    static func normalized(_ sql: String) -> String {
        sql.replacing(#/"([A-Za-z_][A-Za-z0-9_]*)"/#) { String($0.1) }
            .replacing(#/\s+/#, with: " ")
            .replacing(#/ ?([(),]) ?/#) { String($0.1) }
            .trimmingCharacters(in: .whitespaces)
    }

    @Test func schemaSQLCreatesWhatTheMigrationsCreate() throws {
        let scratch = ScratchDirectory("schema-sql")
        let path = scratch.file("j.db")
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let journal = try Connection(path: path, mode: .readOnly)
        #expect(try journal.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        let migrated = try Self.master(of: journal)
        writer.close()

        let text = try String(contentsOfFile: Self.file, encoding: .utf8)
        #expect(text.contains("(schema \(Schema.currentVersion), "), "schema.sql's first line names another version")
        let empty = try Connection(path: ":memory:", mode: .readWriteCreate)
        try empty.execute(text)
        let written = try Self.master(of: empty)

        let onlyMigrated = migrated.filter { !written.contains($0) }
        let onlyWritten = written.filter { !migrated.contains($0) }
        let difference =
            "in a migrated journal only:\n\(onlyMigrated.joined(separator: "\n"))\nin schema.sql only:\n"
            + onlyWritten.joined(separator: "\n")
        #expect(onlyMigrated.isEmpty && onlyWritten.isEmpty, "\(difference)")
        #expect(migrated.count > 20, "\(migrated)")
    }

    @Test func normalizingTakesOutLayoutOnly() {
        let migrated = "CREATE TABLE \"t\" (\n    a INTEGER NOT NULL,\n    b TEXT\n        , c BLOB) WITHOUT ROWID"
        let written = "CREATE TABLE t (a INTEGER NOT NULL, b TEXT, c BLOB)\nWITHOUT ROWID"
        #expect(Self.normalized(migrated) == Self.normalized(written))
        #expect(Self.normalized("CREATE INDEX i ON t(a)") != Self.normalized("CREATE INDEX i ON t(b)"))
        #expect(Self.normalized("CREATE TABLE t (a TEXT)") != Self.normalized("CREATE TABLE t (a TEXT NOT NULL)"))
    }
}
