import Testing

@testable import JournalStore

/// The schema's one numbered list of migrations (issue #33).
@Suite struct SchemaTests {
    @Test func migrationsAreNumberedOneByOneFromOne() {
        #expect(Schema.migrations.map(\.version) == Array(1...Int64(Schema.migrations.count)))
        #expect(Schema.currentVersion == Int64(Schema.migrations.count))
    }

    @Test func schemaEightIsTheUserKeysMigrationAndTheOthersAreSQL() {
        for (version, migration) in Schema.migrations {
            switch migration {
            case .userKeys: #expect(version == 8)
            case .sql(let sql): #expect(version != 8 && !sql.isEmpty)
            }
        }
        #expect(Schema.sql(through: 8).count == 7)
    }
}
