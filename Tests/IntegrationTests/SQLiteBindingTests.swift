import SQLite
import Testing

/// Texts and blobs bound to a statement. The statement binds its own copies, which SQLite reads in place until the
/// parameter is bound again or the statement is finalized: each value must stay intact for as long as SQLite may
/// read it, whatever becomes of the caller's value, across resets and reuse, and must not change under a running
/// statement. Values are built at run time (no literal's storage) and memory freed too early is scribbled over
/// (`scribble`) before the statement runs, so a copy released too soon shows as a wrong value.
@Suite struct SQLiteBindingTests {
    static let insert: StaticString = "INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)"

    static func connection() throws -> Connection {
        let connection = try Connection(path: ":memory:", mode: .readWriteCreate)
        try connection.execute("CREATE TABLE t (a, b, c)")
        return connection
    }

    /// `count` letters starting at letter `seed`, built at run time.
    static func value(_ seed: Int, count: Int) -> String {
        String(decoding: (0..<count).map { UInt8(97 + ($0 + seed) % 26) }, as: UTF8.self)
    }

    /// Allocates, fills with "X" and frees blocks of every size up to a little over `bytes`, so memory freed
    /// since is handed out again and overwritten.
    static func scribble(upTo bytes: Int) {
        var blocks: [UnsafeMutableRawPointer] = []
        for size in stride(from: 8, through: bytes + 64, by: 8) {
            for _ in 0..<4 {
                let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
                block.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "X"), count: size)
                blocks.append(block)
            }
        }
        for block in blocks { block.deallocate() }
    }

    /// The rows of `t`: each column as text (blobs as their bytes' text, with a `blob:` prefix), NULL as `nil`.
    static func rows(_ connection: Connection) throws -> [[String]] {
        let select = try connection.prepare(
            static: "SELECT typeof(a), a, typeof(b), b, typeof(c), c FROM t ORDER BY rowid")
        defer { select.reset() }
        var rows: [[String]] = []
        while try select.step() {
            rows.append(
                stride(from: Int32(0), to: 6, by: 2).map { column in
                    switch select.text(column) {
                    case "null": "nil"
                    case "blob": "blob:" + String(decoding: select.bytes(column + 1), as: UTF8.self)
                    default: select.text(column + 1) ?? "nil"
                    }
                })
        }
        return rows
    }

    @Test func boundValuesOutliveTheCallersValues() throws {
        let connection = try Self.connection()
        let statement = try connection.prepare(static: Self.insert)
        do {
            let text = Self.value(1, count: 40)
            try statement.bind(text, at: 1)
            try statement.bindText(Array(Self.value(2, count: 300).utf8), at: 2)
            try statement.bindBlob(Array(Self.value(3, count: 20).utf8), at: 3)
        }
        Self.scribble(upTo: 400)
        try statement.run()
        #expect(
            try Self.rows(connection) == [
                [Self.value(1, count: 40), Self.value(2, count: 300), "blob:" + Self.value(3, count: 20)]
            ])
    }

    @Test func aResetStatementRunsAgainWithTheSameValues() throws {
        let connection = try Self.connection()
        let statement = try connection.prepare(static: Self.insert)
        try statement.bind(Self.value(4, count: 33), at: 1)
        try statement.bindText(Array(Self.value(5, count: 7).utf8), at: 2)
        try statement.run()
        Self.scribble(upTo: 100)
        try statement.run()
        statement.reset()
        Self.scribble(upTo: 100)
        try statement.run()
        let row = [Self.value(4, count: 33), Self.value(5, count: 7), "nil"]
        #expect(try Self.rows(connection) == [row, row, row])
    }

    @Test func aParameterReboundWithLongerAndShorterValuesOnReuse() throws {
        let connection = try Self.connection()
        // Within a buffer, growing it, too long to keep, empty, and back to short.
        let lengths = [5, 40, 10, 64, 65, 200, 4096, 4097, 9000, 0, 3, 300]
        for (seed, count) in lengths.enumerated() {
            let statement = try connection.prepare(static: Self.insert)
            try statement.bind(Self.value(seed, count: count), at: 1)
            try statement.bindBlob(Array(Self.value(seed + 1, count: count).utf8), at: 3)
            Self.scribble(upTo: count)
            try statement.run()
        }
        let expected = lengths.enumerated().map { seed, count in
            [Self.value(seed, count: count), "nil", "blob:" + Self.value(seed + 1, count: count)]
        }
        #expect(try Self.rows(connection) == expected)
    }

    @Test func parametersLeftUnboundOnReuseAreNullAfterTexts() throws {
        let connection = try Self.connection()
        var statement = try connection.prepare(static: Self.insert)
        try statement.bind(Self.value(6, count: 50), at: 1)
        try statement.bind(Self.value(7, count: 20), at: 2)
        try statement.bindBlob(Array(Self.value(8, count: 30).utf8), at: 3)
        try statement.run()
        statement = try connection.prepare(static: Self.insert)
        try statement.bind(String?.none, at: 2)
        Self.scribble(upTo: 100)
        try statement.run()
        statement = try connection.prepare(static: Self.insert)
        try statement.bind(Self.value(9, count: 25), at: 2)
        try statement.run()
        #expect(
            try Self.rows(connection) == [
                [Self.value(6, count: 50), Self.value(7, count: 20), "blob:" + Self.value(8, count: 30)],
                ["nil", "nil", "nil"],
                ["nil", Self.value(9, count: 25), "nil"],
            ])
    }

    /// Twenty parameters (each tracked on reuse) and seventy (more than tracked: cleared on reuse).
    @Test(arguments: [20, 70]) func manyParameters(count: Int) throws {
        let connection = try Self.connection()
        let sql = "SELECT " + (1...count).map { "?\($0)" }.joined(separator: ", ")
        var statement = try connection.prepare(sql)
        for index in 1...count { try statement.bind(Self.value(index, count: 10 + 7 * index), at: Int32(index)) }
        Self.scribble(upTo: 10 + 7 * count)
        #expect(try statement.step())
        for index in 1...count {
            #expect(statement.text(Int32(index - 1)) == Self.value(index, count: 10 + 7 * index))
        }
        // Reused with every third parameter bound again, shorter: the rest are NULL.
        statement = try connection.prepare(sql)
        for index in stride(from: 1, through: count, by: 3) {
            try statement.bind(Self.value(index + 1, count: index), at: Int32(index))
        }
        Self.scribble(upTo: 10 + 7 * count)
        #expect(try statement.step())
        for index in 1...count {
            #expect(statement.text(Int32(index - 1)) == (index % 3 == 1 ? Self.value(index + 1, count: index) : nil))
        }
        statement.reset()
    }

    @Test func aValueDoesNotChangeUnderARunningStatement() throws {
        let connection = try Self.connection()
        let wanted = Self.value(10, count: 30)
        let insert = try connection.prepare(static: Self.insert)
        for _ in 0..<3 {
            try insert.bind(wanted, at: 1)
            try insert.run()
        }
        let find = try connection.prepare(static: "SELECT rowid FROM t WHERE a = ?1")
        try find.bind(wanted, at: 1)
        #expect(try find.step())
        // SQLite refuses bindings while the statement runs; the value it compares rows with must stay as it was.
        #expect(throws: SQLiteError.self) { try find.bind(Self.value(11, count: 30), at: 1) }
        #expect(try find.step())
        #expect(try find.step())
        #expect(try find.step() == false)
        find.reset()
    }
}
