import SQLite

/// A value kept in the journal's `meta` table, written there as text.
public protocol MetaValue {
    /// The value read back from its text; nil when the text is not one.
    init?(metaText: String)
    /// The text stored for the value.
    var metaText: String { get }
}

extension String: MetaValue {
    public init?(metaText: String) { self = metaText }
    public var metaText: String { self }
}

extension Int: MetaValue {
    public init?(metaText: String) { self.init(metaText) }
    public var metaText: String { String(self) }
}

extension Int64: MetaValue {
    public init?(metaText: String) { self.init(metaText) }
    public var metaText: String { String(self) }
}

/// A key of the journal's `meta` table and the type of its value.
public struct MetaKey<Value: MetaValue>: Sendable, Hashable {
    /// The key as stored.
    public let name: String

    /// The key stored as `name`.
    public init(_ name: String) { self.name = name }
}

/// The journal's `meta` table by typed keys: what the fleet and the derived tables record beside the records.
/// Reads are single statements; writes belong in a transaction (`JournalWriter.updatingMeta`,
/// `JournalFeed.updatingMeta`), and fail on a read-only journal.
public struct JournalMeta {
    let connection: Connection

    package init(_ connection: Connection) { self.connection = connection }

    /// The text stored under `key`, whether or not it reads as a `Value`; nil when the key is absent.
    public func text<Value>(_ key: MetaKey<Value>) throws -> String? {
        let statement = try connection.prepare(static: "SELECT value FROM meta WHERE key = ?1")
        try statement.bind(key.name, at: 1)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) ?? "" : nil
    }

    /// The value stored under `key`; nil when the key is absent or its text is not a `Value`.
    public func value<Value>(_ key: MetaKey<Value>) throws -> Value? {
        try text(key).flatMap(Value.init(metaText:))
    }

    /// Whether the table holds `key`.
    public func contains<Value>(_ key: MetaKey<Value>) throws -> Bool {
        try text(key) != nil
    }

    /// Stores `value` under `key`, replacing what the key held.
    public func set<Value>(_ key: MetaKey<Value>, to value: Value) throws {
        let store = try connection.prepare(
            static: "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2")
        try store.bind(key.name, at: 1)
        try store.bind(value.metaText, at: 2)
        try store.run()
    }

    /// Removes `key` and what it holds, if anything.
    public func remove<Value>(_ key: MetaKey<Value>) throws {
        let delete = try connection.prepare(static: "DELETE FROM meta WHERE key = ?1")
        try delete.bind(key.name, at: 1)
        try delete.run()
    }

    /// Stores `value` under `key` unless the key is present (then what it holds stays).
    public func setIfAbsent<Value>(_ key: MetaKey<Value>, to value: Value) throws {
        let store = try connection.prepare(
            static: "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING")
        try store.bind(key.name, at: 1)
        try store.bind(value.metaText, at: 2)
        try store.run()
    }
}

extension ReadOnlyJournal {
    /// The journal's `meta`, for reading.
    public var meta: JournalMeta { JournalMeta(connection) }
}
