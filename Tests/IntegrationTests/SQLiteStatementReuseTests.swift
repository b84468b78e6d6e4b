import SQLite
import Testing

/// The SQLite wrapper's statement cache: a reused statement behaves as a freshly prepared one (reset, and every
/// parameter its new user leaves unbound NULL), however its last user left it.
@Suite struct SQLiteStatementReuseTests {
    static func connection() throws -> Connection {
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (a, b, c)")
        return connection
    }

    /// The rows of `t` as text, NULL written `nil`.
    static func rows(_ connection: Connection) throws -> [String] {
        let select = try connection.prepare(static: "SELECT a, b, c FROM t ORDER BY rowid")
        defer { select.reset() }
        var rows: [String] = []
        while try select.step() {
            rows.append((0..<3).map { select.text(Int32($0)) ?? "nil" }.joined(separator: " "))
        }
        return rows
    }

    @Test func parametersLeftUnboundOnReuseAreNull() throws {
        let connection = try Self.connection()
        let insert: StaticString = "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)"
        var statement = try connection.prepare(static: insert)
        try statement.bind("x", at: 1)
        try statement.bind(Int64(7), at: 2)
        try statement.bindBlob([1, 2], at: 3)
        try statement.run()
        // Only ?1 this time: ?2 and ?3 must not keep the first row's values.
        statement = try connection.prepare(static: insert)
        try statement.bind("y", at: 1)
        try statement.run()
        // ?3 only: ?1 was bound last time and must be NULL now.
        statement = try connection.prepare(static: insert)
        try statement.bindText(Array("z".utf8), at: 3)
        try statement.run()
        // Nothing at all.
        try connection.prepare(static: insert).run()
        #expect(try Self.rows(connection) == ["x 7 \u{1}\u{2}", "y nil nil", "nil nil z", "nil nil nil"])
    }

    @Test func theTextCacheNullsUnboundParametersToo() throws {
        let connection = try Self.connection()
        let insert = "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)"
        var statement = try connection.prepare(insert)
        try statement.bind("x", at: 1)
        try statement.bind(Int64?.some(3), at: 2)
        try statement.run()
        statement = try connection.prepare(insert)
        try statement.bind(Int64?.none, at: 1)
        try statement.run()
        #expect(try Self.rows(connection) == ["x 3 nil", "nil nil nil"])
    }

    @Test func aManualResetKeepsTheBindings() throws {
        let connection = try Self.connection()
        let statement = try connection.prepare(static: "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)")
        try statement.bind("x", at: 1)
        try statement.bind("y", at: 2)
        try statement.run()
        statement.reset()
        try statement.bind("w", at: 2)
        try statement.run()
        #expect(try Self.rows(connection) == ["x y nil", "x w nil"])
    }

    @Test func aQueryLeftMidwayIsResetOnReuse() throws {
        let connection = try Self.connection()
        try connection.execute("INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', NULL), (3, 'c', NULL)")
        let find: StaticString = "SELECT b FROM t WHERE a >= ?1 ORDER BY a"
        var statement = try connection.prepare(static: find)
        try statement.bind(Int64(1), at: 1)
        #expect(try statement.step())
        #expect(statement.text(0) == "a")
        // Left on its first row: the next user must still be able to bind and start over.
        statement = try connection.prepare(static: find)
        try statement.bind(Int64(2), at: 1)
        #expect(try statement.step())
        #expect(statement.text(0) == "b")
        statement = try connection.prepare(static: find)
        #expect(try statement.step() == false)  // a >= NULL matches nothing
    }

    @Test func aStatementWithMoreParametersThanTrackedIsClearedOnReuse() throws {
        let connection = try Self.connection()
        let insert: StaticString = "INSERT INTO t (a, b, c) VALUES (?1, ?70, ?3)"
        var statement = try connection.prepare(static: insert)
        try statement.bind("x", at: 1)
        try statement.bind("y", at: 70)
        try statement.run()
        statement = try connection.prepare(static: insert)
        try statement.bind("z", at: 3)
        try statement.run()
        #expect(try Self.rows(connection) == ["x y nil", "nil nil z"])
    }

    @Test func manyStaticStatementsEachKeepTheirOwn() throws {
        let connection = try Self.connection()
        let queries: [StaticString] = [
            "SELECT 0", "SELECT 1", "SELECT 2", "SELECT 3", "SELECT 4", "SELECT 5", "SELECT 6", "SELECT 7",
            "SELECT 8", "SELECT 9", "SELECT 10", "SELECT 11", "SELECT 12", "SELECT 13", "SELECT 14", "SELECT 15",
            "SELECT 16", "SELECT 17", "SELECT 18", "SELECT 19", "SELECT 20", "SELECT 21", "SELECT 22", "SELECT 23",
            "SELECT 24", "SELECT 25", "SELECT 26", "SELECT 27", "SELECT 28", "SELECT 29", "SELECT 30", "SELECT 31",
            "SELECT 32", "SELECT 33", "SELECT 34", "SELECT 35", "SELECT 36", "SELECT 37", "SELECT 38", "SELECT 39",
        ]
        var first: [Statement] = []
        for query in queries { first.append(try connection.prepare(static: query)) }
        for (index, query) in queries.enumerated() {
            let statement = try connection.prepare(static: query)
            #expect(statement === first[index])
            #expect(try statement.step())
            #expect(statement.int64(0) == Int64(index))
            statement.reset()
        }
    }
}
