import Posix
import SQLite

/// Walking `Schema.migrations`: the current version, and applying what a journal lacks.
extension Schema {
    /// The version a fully migrated journal has: the last of `migrations`.
    public static var currentVersion: Int64 { migrations.last?.version ?? 0 }

    /// The SQL of the migrations up to `version`, in order (for tests that build an older journal).
    static func sql(through version: Int64) -> [String] {
        migrations.compactMap { step in
            guard step.version <= version, case .sql(let sql) = step.migration else { return nil }
            return sql
        }
    }

    /// Why a journal cannot be used.
    public struct NewerSchemaError: Error, CustomStringConvertible {
        public let found: Int64
        public var description: String {
            "the journal's schema version \(found) is newer than this build knows (\(Schema.currentVersion))"
        }
    }

    /// Applies every migration the database lacks, in order, each in its own transaction (so a crash leaves the
    /// journal at one version or the next, never between); a long one says how far it got on `log`.
    package static func migrate(
        _ connection: Connection, tuning: UserKeysMigrationTuning = .init(), log: Logger = .discard
    ) throws {
        let version = try connection.scalarInt("PRAGMA user_version") ?? 0
        guard version <= currentVersion else { throw NewerSchemaError(found: version) }
        for (target, migration) in migrations where target > version {
            switch migration {
            case .sql(let sql): try apply(sql, version: target, on: connection)
            case .userKeys: try UserKeysMigration.run(on: connection, tuning: tuning, log: log)
            }
        }
    }

    private static func apply(_ sql: String, version: Int64, on connection: Connection) throws {
        try connection.transaction {
            try connection.execute(sql)
            try connection.execute("PRAGMA user_version = \(version)")
        }
    }
}
