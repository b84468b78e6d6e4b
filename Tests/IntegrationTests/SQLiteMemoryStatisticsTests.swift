import Testing

@testable import SQLite

/// SQLite's memory statistics, which cost a process-wide mutex on every allocation, are turned off before the
/// process's first connection opens: this fails when something initializes SQLite before then (the setting is
/// then refused, and left on).
@Suite struct SQLiteMemoryStatisticsTests {
    @Test func areOffOnceAConnectionIsOpen() throws {
        _ = try Connection(path: ":memory:", mode: .readWriteCreate)
        #expect(Connection.memoryStatisticsOff)
    }
}
