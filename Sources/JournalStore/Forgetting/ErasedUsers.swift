import OfferTrackDomain
import SQLite

/// Who the journal has forgotten (SPEC section 11), known only by a keyed hash of their id: `erasures` holds,
/// for each forgotten person, HMAC-SHA256 of their id under the journal's own random key (`meta`
/// `erasure_key`), a 64-bit SipHash of it under the same key, and the erasure that names them. Every record the
/// writer journals is tested against the SipHashes in memory (one hash of its `user`); only a match is
/// confirmed by the HMAC in the table, so a forgotten person's later records are renamed before they are
/// journaled, at about the cost of one hash a record.
package final class ErasedUsers {
    /// Schema 12: the forgotten people's hashes (`erasures`), and the partition an edge's renamed record keeps.
    static let migration = """
        CREATE TABLE erasures (
            hash BLOB PRIMARY KEY,
            probe INTEGER NOT NULL,
            id TEXT NOT NULL,
            ts INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX erasures_by_probe ON erasures(probe);
        ALTER TABLE records ADD COLUMN kept_partition INTEGER;
        """

    static let keyName = "erasure_key"
    /// The journal's key; nil until the first erasure creates it.
    private var key: [UInt8]?
    /// The SipHash of every forgotten id.
    private var probes: Set<UInt64> = []
    private var loaded = false

    package init() {}

    /// A forgotten person's entry: the erasure that names them.
    struct Entry {
        let erasureID: String
        let erasureTS: Int64

        var name: String { Erasure.name(erasureID: erasureID) }
    }

    /// Reads the key and the probes (once per connection; again after `forget`).
    package func load(on connection: Connection) throws {
        guard !loaded else { return }
        key = try connection.scalarText("SELECT value FROM meta WHERE key = '\(Self.keyName)'").flatMap(Self.bytes)
        probes = []
        let select = try connection.prepare("SELECT probe FROM erasures")
        while try select.step() { probes.insert(UInt64(bitPattern: select.int64(0))) }
        loaded = true
    }

    /// After a rolled-back transaction: read everything again before the next use.
    package func forget() { loaded = false }

    /// Whether anyone is forgotten (when not, records need no test).
    package var isEmpty: Bool { probes.isEmpty }

    /// The entry of `user` when they are forgotten.
    func entry(of user: String, on connection: Connection) throws -> Entry? {
        guard let key, !probes.isEmpty else { return nil }
        let probe = KeyedHash.sipHash(user, key: key)
        guard probes.contains(probe) else { return nil }
        let hash = KeyedHash.hmacSHA256(Array(user.utf8), key: key)
        let select = try connection.prepare(static: "SELECT id, ts FROM erasures WHERE hash = ?1")
        try select.bindBlob(hash, at: 1)
        defer { select.reset() }
        guard try select.step(), let id = select.text(0) else { return nil }
        return Entry(erasureID: id, erasureTS: select.int64(1))
    }

    /// The entry of the person `name` was given (`erased:<id>`) by the erasure that named them; nil for any
    /// other name.
    func entry(named name: String, on connection: Connection) throws -> Entry? {
        guard name.utf8.starts(with: Erasure.namePrefix.utf8) else { return nil }
        let id = String(name.utf8.dropFirst(Erasure.namePrefix.utf8.count)) ?? ""
        let select = try connection.prepare(static: "SELECT ts FROM erasures WHERE id = ?1")
        try select.bind(id, at: 1)
        defer { select.reset() }
        return try select.step() ? Entry(erasureID: id, erasureTS: select.int64(0)) : nil
    }

    /// Moves a person's entry from the erasure `id` to the earlier erasure `newID` at `ts` (in the caller's
    /// transaction).
    func rename(erasureID id: String, to newID: String, ts: Int64, on connection: Connection) throws {
        let update = try connection.prepare(static: "UPDATE erasures SET id = ?2, ts = ?3 WHERE id = ?1")
        try update.bind(id, at: 1)
        try update.bind(newID, at: 2)
        try update.bind(ts, at: 3)
        try update.run()
    }

    /// Records (in the caller's transaction) that `user` is forgotten, named by erasure `id` at `ts`, creating
    /// the journal's key with the first erasure. Returns the probe to add once the transaction commits.
    func register(_ user: String, erasureID id: String, ts: Int64, on connection: Connection) throws -> UInt64 {
        let key = try self.key ?? createKey(on: connection)
        let probe = KeyedHash.sipHash(user, key: key)
        let upsert = try connection.prepare(
            static: """
                INSERT INTO erasures (hash, probe, id, ts) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (hash) DO UPDATE SET id = excluded.id, ts = excluded.ts
                """)
        try upsert.bindBlob(KeyedHash.hmacSHA256(Array(user.utf8), key: key), at: 1)
        try upsert.bind(Int64(bitPattern: probe), at: 2)
        try upsert.bind(id, at: 3)
        try upsert.bind(ts, at: 4)
        try upsert.run()
        return probe
    }

    /// Takes in the probes of a committed transaction.
    package func committed(_ added: [UInt64]) { probes.formUnion(added) }

    /// Whether `user` is a forgotten person's id (`verify`: no stored form may still name one).
    package func isForgotten(_ user: String, on connection: Connection) throws -> Bool {
        try entry(of: user, on: connection) != nil
    }

    private func createKey(on connection: Connection) throws -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let store = try connection.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")
        try store.bind(Self.keyName, at: 1)
        try store.bind(SHA256.hex(key), at: 2)
        try store.run()
        self.key = key
        return key
    }

    private static func bytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
