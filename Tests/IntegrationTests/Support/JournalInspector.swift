import SQLite

/// Reads the journal directly with SQLite, to check what was committed.
struct JournalInspector {
    let connection: Connection

    init(path: String) throws {
        connection = try Connection(path: path, mode: .readOnly)
    }

    /// `seq` of every journaled id.
    func seqByID() throws -> [String: Int64] {
        let statement = try connection.prepare("SELECT id, seq FROM records")
        var result: [String: Int64] = [:]
        while try statement.step() { result[statement.text(0) ?? ""] = statement.int64(1) }
        return result
    }

    func count() throws -> Int64 { try connection.scalarInt("SELECT count(*) FROM records") ?? -1 }

    func integrityCheck() throws -> String? { try connection.scalarText("PRAGMA integrity_check") }
}

extension JournalInspector {
    /// Every record's line in the journal at `path`.
    static func lines(of path: String) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let statement = try connection.prepare("SELECT line FROM records")
        defer { statement.reset() }
        var lines: [String] = []
        while try statement.step() { lines.append(statement.text(0) ?? "") }
        return lines
    }

    /// Records in the journal at `path`.
    static func count(of path: String) throws -> Int {
        try Connection(path: path, mode: .readOnly).scalarInt("SELECT count(*) FROM records").map(Int.init) ?? 0
    }
}
