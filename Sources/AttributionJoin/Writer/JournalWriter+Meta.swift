import JournalStore
import SQLite

/// The journal's `meta` (`JournalMeta`), written through the writer's connection.
extension JournalWriter {
    /// Runs `body` on the journal's `meta` in one small write transaction on the writer's connection.
    public func updatingMeta<T>(_ body: (JournalMeta) throws -> T) throws -> T {
        let connection = try connectionInUse()
        return try connection.transaction { try body(JournalMeta(connection)) }
    }
}
