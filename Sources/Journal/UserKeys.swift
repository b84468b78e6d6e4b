import SQLite

/// Users' integer keys (schema 8): each user is given one the first time one of their records is journaled, and
/// every record is listed under it in the per-user index `by_user(k, ts, seq)`.
enum UserKeys {
    /// `user`'s key, given now (in the caller's transaction) if the user has none yet. Keys are rowids of
    /// `users`, so they are never reused.
    static func key(of user: String, on connection: Connection) throws -> Int64 {
        let find = try connection.prepare(static: "SELECT k FROM users WHERE user = ?1")
        try find.bind(user, at: 1)
        defer { find.reset() }
        if try find.step() { return find.int64(0) }
        let add = try connection.prepare(static: "INSERT INTO users (user) VALUES (?1)")
        try add.bind(user, at: 1)
        try add.run()
        return connection.lastInsertRowID
    }

    /// Lists the record `seq` (at `ts`) under its user's key `k`.
    static func index(seq: Int64, ts: Int64, key: Int64, on connection: Connection) throws {
        let insert = try connection.prepare(static: "INSERT INTO by_user (k, ts, seq) VALUES (?1, ?2, ?3)")
        try insert.bind(key, at: 1)
        try insert.bind(ts, at: 2)
        try insert.bind(seq, at: 3)
        try insert.run()
    }

    /// Lists every record under its user's key again from `records` alone (`offertrack rebuild`): keys of users
    /// with records are kept, users without records are forgotten, users without a key are given one. One scan
    /// of `records`; the entries are sorted before they are inserted, so the index is written in order.
    static func rebuild(on connection: Connection) throws {
        try connection.execute(
            """
            DELETE FROM by_user;
            DELETE FROM users WHERE user NOT IN (SELECT user FROM records);
            INSERT INTO users (user) SELECT user FROM records WHERE user NOT IN (SELECT user FROM users)
                GROUP BY user ORDER BY user;
            INSERT INTO by_user (k, ts, seq)
                SELECT u.k, r.ts, r.seq FROM records r JOIN users u ON u.user = r.user ORDER BY 1, 2, 3;
            """)
    }
}
