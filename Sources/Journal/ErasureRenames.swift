import OfferTrackDomain
import SQLite
import WireFormat

/// SPEC section 11 applied to one batch, in its transaction, before anything of it is journaled: records of a
/// forgotten person are renamed to the name their erasure gave; an `erasure` names its person (unless an
/// earlier one, in `(ts, id)` order, already did) and renames every stored form of them: the `users` entry,
/// each record's `user` and line. Attribution reads records by user key, which a rename keeps, so no derived
/// row or amount changes; only when the new name already has records of its own (someone sent records under
/// it) are the two users merged and their rows recomputed.
struct ErasureRenames {
    /// The batch as it is journaled (renamed where needed).
    var batch: [Submission]
    /// Names given to users the journal already held (the join must not take them for new users).
    var renamedUsers: [String] = []
    /// Probes to add to `ErasedUsers` once the transaction commits.
    var probes: [UInt64] = []
    /// Users whose records moved under another user's key: recomputed after the batch's join.
    var merged: [(user: String, key: Int64)] = []

    /// Renames what `erased` says must be, and applies the batch's own erasures. `batch` is returned as it is
    /// (no work) when nobody is forgotten and it holds no erasure.
    init(_ batch: [Submission], erased: ErasedUsers, on connection: Connection) throws {
        self.batch = batch
        let hasErasure = batch.contains { if case .erasure = $0.record.body { true } else { false } }
        if erased.isEmpty && !hasErasure { return }
        // Each record's original user, and its forgotten person's entry when there is one.
        var entries: [String: ErasedUsers.Entry?] = [:]
        var originals = batch.map(\.record.user)
        for index in self.batch.indices {
            let user = originals[index]
            let entry = try entries[user] ?? erased.entry(of: user, on: connection)
            entries[user] = entry
            if let entry { rename(index, to: entry.name) }
        }
        guard hasErasure else { return }
        // The batch's erasures in journal order: the first of a person's names them.
        let erasures = self.batch.indices.filter {
            if case .erasure = self.batch[$0].record.body { true } else { false }
        }.sorted { RecordOrder.precedes(self.batch[$0].record, self.batch[$1].record) }
        for index in erasures {
            let erasure = self.batch[index].record
            let person = originals[index]
            let current = entries[person] ?? nil
            if let current,
                !RecordOrder.precedes(ts: erasure.ts, id: erasure.id, ts: current.erasureTS, id: current.erasureID)
            {
                continue
            }
            let name = Erasure.name(erasureID: erasure.id)
            let previous = current?.name ?? person
            try renameJournaled(previous, to: name, on: connection)
            for other in self.batch.indices where ExactString.equals(self.batch[other].record.user, previous) {
                rename(other, to: name)
            }
            probes.append(try erased.register(person, erasureID: erasure.id, ts: erasure.ts, on: connection))
            entries[person] = ErasedUsers.Entry(hash: [], erasureID: erasure.id, erasureTS: erasure.ts)
            for other in originals.indices where ExactString.equals(originals[other], previous) {
                originals[other] = person
            }
        }
    }

    /// Gives submission `index` the user `name`, in its record and in its line.
    private mutating func rename(_ index: Int, to name: String) {
        let submission = batch[index]
        guard !ExactString.equals(submission.record.user, name) else { return }
        var record = submission.record
        record.user = name
        let line = UserMemberRewrite.renaming(submission.line, to: name) ?? submission.line
        batch[index] = Submission(record: record, line: line)
    }

    /// Renames every journaled record of `user` to `name`: the key's name, then each record's column and line.
    private mutating func renameJournaled(_ user: String, to name: String, on connection: Connection) throws {
        guard let key = try UserKeys.existingKey(of: user, on: connection) else { return }
        if let target = try UserKeys.existingKey(of: name, on: connection) {
            // The name has records of its own: they become one user, under the name's key.
            for table in ["by_user", "by_user_recent"] {
                let move = try connection.prepare("UPDATE \(table) SET k = ?2 WHERE k = ?1")
                try move.bind(key, at: 1)
                try move.bind(target, at: 2)
                try move.run()
            }
            let drop = try connection.prepare("DELETE FROM users WHERE k = ?1")
            try drop.bind(key, at: 1)
            try drop.run()
            merged.append((name, key))
            try renameRecords(key: target, to: name, on: connection)
            return
        }
        let update = try connection.prepare(static: "UPDATE users SET user = ?2 WHERE k = ?1")
        try update.bind(key, at: 1)
        try update.bind(name, at: 2)
        try update.run()
        renamedUsers.append(name)
        try renameRecords(key: key, to: name, on: connection)
    }

    /// Gives every record listed under `key` the user `name`, in its column and its line.
    private func renameRecords(key: Int64, to name: String, on connection: Connection) throws {
        let select = try connection.prepare(
            static: """
                SELECT r.seq, r.line FROM (SELECT seq FROM by_user WHERE k = ?1
                    UNION ALL SELECT seq FROM by_user_recent WHERE k = ?1) b JOIN records r ON r.seq = b.seq
                WHERE r.user != ?2
                """)
        try select.bind(key, at: 1)
        try select.bind(name, at: 2)
        var rows: [(seq: Int64, line: [UInt8])] = []
        while try select.step() { rows.append((select.int64(0), select.bytes(1))) }
        select.reset()
        let update = try connection.prepare(static: "UPDATE records SET user = ?2, line = ?3 WHERE seq = ?1")
        for row in rows {
            try update.bind(row.seq, at: 1)
            try update.bind(name, at: 2)
            try update.bindText(UserMemberRewrite.renaming(row.line, to: name) ?? row.line, at: 3)
            try update.run()
        }
    }
}
