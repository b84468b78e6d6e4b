import JSON
import OfferTrackDomain
import SQLite

/// SPEC section 11 applied to one batch, in its transaction, before anything of it is journaled: records of a
/// forgotten person are renamed to the name their erasure gave; an `erasure` names its person (unless an
/// earlier one, in `(ts, id)` order, already did) and renames every stored form of them: the `users` entry,
/// each record's `user` and line (a large person's records partly, the rest in chunks after the batch:
/// `PendingRename`). Attribution reads records by user key, which a rename keeps, so no derived
/// row or amount changes; only when the new name already has records of its own (someone sent records under
/// it) are the two users merged and their rows recomputed.
package struct ErasureRenames {
    /// The batch as it is journaled (renamed where needed).
    package var batch: [Submission]
    /// Names given to users the journal already held (the join must not take them for new users).
    package var renamedUsers: [String] = []
    /// Probes to add to `ErasedUsers` once the transaction commits.
    package var probes: [UInt64] = []
    /// Users whose records moved under another user's key: recomputed after the batch's join.
    package var merged: [(user: String, key: Int64)] = []
    /// Presentations of sealed days whose eligibility a merge changed: their days' sealed counts follow (SPEC 12).
    package var sealedEligibilityChanges: [SealedFacts.EligibilityChange] = []
    /// An edge's P: renamed records keep their user's partition (`kept_partition`); nil elsewhere.
    let partitionsTotal: Int?
    /// Journaled records an erasure renames in the batch; the rest wait in `pending_renames` (nil: none wait).
    let rowsInBatch: Int?
    /// Whether the batch started, restarted or ended a pending rename.
    private(set) var pendingChanged = false
    /// The partition each renamed submission's user had, by batch index (edges only).
    private var keptPartitions: [Int: Int] = [:]

    /// Renames what `erased` says must be, and applies the batch's own erasures. `batch` is returned as it is
    /// (no work) when nobody is forgotten and it holds no erasure.
    ///
    /// `sealed` (SPEC 12): an erasure the writer will refuse, `expired` or an id sealing removed, is not applied.
    package init(
        _ batch: [Submission], erased: ErasedUsers, partitionsTotal: Int?, rowsInBatch: Int? = nil,
        sealed: SealedIDs? = nil, on connection: Connection
    ) throws {
        self.batch = batch
        self.partitionsTotal = partitionsTotal
        self.rowsInBatch = rowsInBatch
        let hasErasure = batch.contains { if case .erasure = $0.record.body { true } else { false } }
        if erased.isEmpty && !hasErasure { return }
        // Each record's original user, and its forgotten person's entry when there is one (keyed by exact scalars).
        var entries: [ExactString: ErasedUsers.Entry] = [:]
        var originals = batch.map(\.record.user)
        for index in self.batch.indices {
            guard let entry = try erased.entry(of: originals[index], on: connection) else { continue }
            entries[ExactString(originals[index])] = entry
            try rename(index, to: entry.name)
        }
        guard hasErasure else { return }
        // The batch's erasures that will be journaled (not an id the journal holds already, nor one an earlier line
        // of the batch uses: those are duplicates or conflicts and change nothing), in journal order: the first of
        // a person's names them.
        var seen = Set<ExactString>()
        var erasures: [Int] = []
        for index in self.batch.indices {
            guard case .erasure = self.batch[index].record.body,
                seen.insert(ExactString(self.batch[index].record.id)).inserted
            else { continue }
            if try Self.isJournaled(self.batch[index].record.id, on: connection) {
                // Journaled, but without the person it names: it now learns them (and answers a duplicate).
                if try Self.namesItsPersonAnew(self.batch[index], on: connection) { erasures.append(index) }
                continue
            }
            if let sealed, try sealed.refuses(self.batch[index].record, on: connection) { continue }
            erasures.append(index)
        }
        erasures.sort { RecordOrder.precedes(self.batch[$0].record, self.batch[$1].record) }
        for index in erasures {
            let erasure = self.batch[index].record
            var person = originals[index]
            var current = entries[ExactString(person)]
            // An erasure sent under a name an erasure gave is one more erasure of that person (SPEC 11).
            if current == nil, let named = try erased.entry(named: person, on: connection) {
                current = named
            }
            if let current,
                !RecordOrder.precedes(ts: erasure.ts, id: erasure.id, ts: current.erasureTS, id: current.erasureID)
            {
                continue
            }
            let name = Erasure.name(erasureID: erasure.id)
            // Already renamed by the journal that sent it, and naming nobody this one knows: nothing to learn.
            if current == nil, ExactString.equals(person, name) { continue }
            let previous = current?.name ?? person
            try renameJournaled(previous, to: name, on: connection)
            for other in self.batch.indices where ExactString.equals(self.batch[other].record.user, previous) {
                try rename(other, to: name)
            }
            if let current, ExactString.equals(person, current.name) {
                // Known by the name only: the person's entry moves to the earlier erasure.
                try erased.rename(erasureID: current.erasureID, to: erasure.id, ts: erasure.ts, on: connection)
                person = current.name
            } else {
                probes.append(try erased.register(person, erasureID: erasure.id, ts: erasure.ts, on: connection))
            }
            entries[ExactString(person)] = ErasedUsers.Entry(erasureID: erasure.id, erasureTS: erasure.ts)
            for other in originals.indices where ExactString.equals(originals[other], previous) {
                originals[other] = person
            }
        }
    }

    /// A line that cannot be renamed: never journaled nor left half renamed.
    private static func noUser(_ record: String) -> SQLiteError {
        SQLiteError(code: 1, message: "the line of record \(record) has no top-level user to rename", sql: nil)
    }

    /// Whether a record with `id` is journaled.
    private static func isJournaled(_ id: String, on connection: Connection) throws -> Bool {
        let find = try connection.prepare(static: "SELECT 1 FROM records WHERE id = ?1")
        try find.bind(id, at: 1)
        defer { find.reset() }
        return try find.step()
    }

    /// Whether `submission`, an erasure whose id is journaled, is that erasure as first sent, naming a person the
    /// journal does not know: the journaled one is a record of its own name (`erased:<id>`) and the line renamed
    /// to it is the journaled line. This is how a journal that received an erasure already renamed (a central
    /// journal fed by an edge that restarted before forwarding it, SPEC 10) applies it once sent again.
    private static func namesItsPersonAnew(_ submission: Submission, on connection: Connection) throws -> Bool {
        let id = submission.record.id
        let name = Erasure.name(erasureID: id)
        guard !submission.record.user.utf8.starts(with: Erasure.namePrefix.utf8) else { return false }
        let find = try connection.prepare(static: "SELECT user, line FROM records WHERE id = ?1")
        try find.bind(id, at: 1)
        defer { find.reset() }
        guard try find.step(), find.text(0) == name else { return false }
        return UserMemberRewrite.renaming(submission.line, to: name) == find.bytes(1)
    }

    /// Gives submission `index` the user `name`, in its record and in its line.
    private mutating func rename(_ index: Int, to name: String) throws {
        let submission = batch[index]
        guard !ExactString.equals(submission.record.user, name) else { return }
        if let partitionsTotal, keptPartitions[index] == nil {
            keptPartitions[index] = Partition.of(user: submission.record.user, total: partitionsTotal)
        }
        var record = submission.record
        record.user = name
        // A validated record's line always has a top-level `user`; should one not, the batch fails rather than
        // keep the old name in the line.
        guard let line = UserMemberRewrite.renaming(submission.line, to: name) else {
            throw Self.noUser(record.id)
        }
        batch[index] = Submission(record: record, line: line, partition: submission.partition)
    }

    /// Renames every journaled record of `user` to `name`: the key's name, then each record's column and line.
    private mutating func renameJournaled(_ user: String, to name: String, on connection: Connection) throws {
        guard let key = try UserKeys.existingKey(of: user, on: connection) else { return }
        if let target = try UserKeys.existingKey(of: name, on: connection) {
            // The name has records of its own: they become one user, under the name's key.
            let sealed = try SealState.read(on: connection)
            if let sealed {
                sealedEligibilityChanges += try SealedFacts.eligibilityChanges(
                    merging: key, into: target, state: sealed, on: connection)
                try SealedFacts.move(from: key, to: target, sealedBefore: sealed.sealedBefore, on: connection)
            }
            for table in UserIndexLevel.allCases.map(\.table) {
                let move = try connection.prepare("UPDATE \(table) SET k = ?2 WHERE k = ?1")
                try move.bind(key, at: 1)
                try move.bind(target, at: 2)
                try move.run()
            }
            let drop = try connection.prepare("DELETE FROM users WHERE k = ?1")
            try drop.bind(key, at: 1)
            try drop.run()
            // What sealing counted of the user's records (SPEC 12) moves with them.
            try connection.execute(
                """
                INSERT INTO sealed_users (k, records) SELECT \(target), records FROM sealed_users WHERE k = \(key)
                ON CONFLICT (k) DO UPDATE SET records = records + excluded.records;
                DELETE FROM sealed_users WHERE k = \(key)
                """)
            // Each side kept its own latest check, say: what the merged user's rules no longer read goes.
            if let sealed { try SealedFacts.trim(key: target, sealedBefore: sealed.sealedBefore, on: connection) }
            merged.append((name, key))
            // Rare (records were sent under the name an erasure gives): renamed whole in the batch.
            try PendingRename.remove(key: key, on: connection)
            try renameRecords(key: target, to: name, limit: nil, on: connection)
            return
        }
        let update = try connection.prepare(static: "UPDATE users SET user = ?2 WHERE k = ?1")
        try update.bind(key, at: 1)
        try update.bind(name, at: 2)
        try update.run()
        renamedUsers.append(name)
        try renameRecords(key: key, to: name, limit: rowsInBatch, on: connection)
    }

    /// After the batch's inserts: each renamed record that was journaled keeps its user's partition (edges).
    package func keepPartitions(of outcomes: [AppendOutcome], on connection: Connection) throws {
        guard !keptPartitions.isEmpty else { return }
        let keep = try connection.prepare("UPDATE records SET kept_partition = ?2 WHERE seq = ?1")
        for (index, partition) in keptPartitions {
            guard case .accepted(let seq) = outcomes[index] else { continue }
            try keep.bind(seq, at: 1)
            try keep.bind(Int64(partition), at: 2)
            try keep.run()
        }
    }

    /// Gives every record listed under `key` the user `name`, in its column and its line (and, on an edge, keeps
    /// the partition of the user it had): up to `rowsInBatch` of them here, the rest left pending (schema 13,
    /// `PendingRename`) for the writer's chunks after the batch; all of them (`limit` nil) for a merge.
    private mutating func renameRecords(key: Int64, to name: String, limit: Int?, on connection: Connection) throws {
        var rename = PendingRename(key: key, name: name, after: .start)
        if try rename.advance(limit: limit, partitionsTotal: partitionsTotal, on: connection) {
            try PendingRename.remove(key: key, on: connection)
        } else {
            try rename.save(on: connection)
        }
        pendingChanged = true
    }
}
