import OfferTrackDomain
import SQLite

/// The fleet partition of a central journal's user whose name does not hash to it (SPEC 10, 11): a forgotten
/// person's records carry the name their erasure gave (`erased:<id>`) but stay in the partition of the id they had.
/// The consumer tags each record with the partition it came from (`Submission.partition`); the writer notes here
/// every journaled name whose partition is another, and every forgotten person's name, so that a journal split between central hosts
/// (`offertrack split`) knows where each of its users belongs.
public enum UserPartitions {
    /// Schema 18.
    static let migration = """
        CREATE TABLE user_partitions (user TEXT PRIMARY KEY, partition INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// Notes, in the caller's transaction, the partition of each record of `batch` (as journaled, renamed where it
    /// was) that came from a partition its user's name does not hash to, and of every forgotten person's name (so
    /// that a name without a note is one an older release journaled, whose partition is unknown).
    package static func note(_ batch: [Submission], on connection: Connection) throws {
        var insert: Statement?
        for submission in batch {
            guard let origin = submission.partition else { continue }
            let user = submission.record.user
            guard
                Partition.of(user: user, total: origin.total) != origin.index
                    || user.utf8.starts(with: Erasure.namePrefix.utf8)
            else { continue }
            if insert == nil {
                insert = try connection.prepare(
                    static: "INSERT OR IGNORE INTO user_partitions (user, partition) VALUES (?1, ?2)")
            }
            try insert?.bind(user, at: 1)
            try insert?.bind(Int64(origin.index), at: 2)
            try insert?.run()
        }
    }

    /// Every forgotten person's name the journal's users have (`erased:<id>`), in order.
    package static func erasedNames(on connection: Connection) throws -> [String] {
        let select = try connection.prepare("SELECT user FROM users WHERE user >= ?1 AND user < ?2 ORDER BY user")
        try select.bind(Erasure.namePrefix, at: 1)
        // The first string after every one that starts with the prefix (`erased;`).
        try select.bind(String(Erasure.namePrefix.dropLast()) + ";", at: 2)
        defer { select.reset() }
        var names: [String] = []
        while try select.step() {
            let user = select.text(0) ?? ""
            if user.hasPrefix(Erasure.namePrefix) { names.append(user) }
        }
        return names
    }

    /// Every noted user and partition.
    package static func all(on connection: Connection) throws -> [String: Int] {
        let select = try connection.prepare("SELECT user, partition FROM user_partitions")
        defer { select.reset() }
        var noted: [String: Int] = [:]
        while try select.step() { noted[select.text(0) ?? ""] = Int(select.int64(1)) }
        return noted
    }
}

/// The stream partition a consumed record came from, of the fleet's P.
public struct StreamPartition: Sendable, Equatable {
    public let index: Int
    public let total: Int

    public init(index: Int, total: Int) {
        self.index = index
        self.total = total
    }

    /// The partition of the stream subject `subject`; nil for a subject that is no partition's of `total`.
    public static func of(subject: String, total: Int) -> StreamPartition? {
        guard let index = Partition.of(subject: subject), index >= 0, index < total else { return nil }
        return StreamPartition(index: index, total: total)
    }
}
