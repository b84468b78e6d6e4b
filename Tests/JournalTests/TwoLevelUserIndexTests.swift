import Foundation
import OfferTrackDomain
import SQLite
import Simulator
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// The per-user index in two levels (schema 10, `UserKeys`): batches list records in `by_user_recent`, each
/// commit moves one slice of keys into `by_user`, and every reader reads both.
@Suite struct TwoLevelUserIndexTests {
    let path = "/tmp/two-level-test-\(UInt32.random(in: 0...UInt32.max)).db"

    /// A journal of simulated traffic appended in batches of 200: `(writer, the journal's last seq after each batch)`.
    func journal(users: Int, seed: UInt64) throws -> (JournalWriter, [Int64]) {
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = Array(WorkloadSimulator(users: users, seed: seed, days: 2).lines)
        var lastSeqs: [Int64] = []
        for start in stride(from: 0, to: lines.count, by: 200) {
            let batch = try lines[start..<min(start + 200, lines.count)].map(JournalRecordLines.submission)
            _ = try writer.append(batch, receivedAt: 0)
            lastSeqs.append(try writer.lastSeq())
        }
        return (writer, lastSeqs)
    }

    /// Every user's records as `readUsers` hands them over from `after`, stopping after `stopAfter` users (all
    /// when nil), as user → sorted ids; and whether it said every user was read.
    func read(after: String? = nil, stopAfter: Int? = nil) throws -> ([String], [String: [String]], Bool) {
        let connection = try Connection(path: path, mode: .readOnly)
        var order: [String] = []
        var ids: [String: [String]] = [:]
        let readAll = try RecordQueries.readUsers(after: after, on: connection) { user, records in
            order.append(user)
            ids[user] = records.map(\.id).sorted()
            return stopAfter.map { order.count < $0 } ?? true
        }
        return (order, ids, readAll)
    }

    /// The same from `records` itself, which knows nothing of the index: user (in byte order) → sorted ids.
    func expected() throws -> [(user: String, ids: [String])] {
        let connection = try Connection(path: path, mode: .readOnly)
        var byUser: [String: [String]] = [:]
        let statement = try connection.prepare("SELECT user, id FROM records")
        while try statement.step() { byUser[statement.text(0) ?? "", default: []].append(statement.text(1) ?? "") }
        return byUser.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }.map { ($0.key, $0.value.sorted()) }
    }

    /// The slices of a round by records journaled, computed by hand: 16 up to 139,263 records, one more for each
    /// 8,192 more, 4,096 from 33,554,432.
    @Test(arguments: [
        (0, 16), (100_000, 16), (139_263, 16), (139_264, 17), (1_000_000, 122), (10_000_000, 1220),
        (33_554_431, 4095), (33_554_432, 4096), (365_000_000, 4096),
    ])
    func roundsHaveMoreSlicesOnceTheJournalIsLong(records: Int64, slices: Int64) {
        #expect(UserKeys.slices(forRecords: records) == slices)
    }

    @Test func everyEntryReachesTheMainLevelWithinOneRoundOfSlices() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (_, lastSeqs) = try journal(users: 1500, seed: 3)
        #expect(lastSeqs.count > Int(UserKeys.fewestSlices) + 2)
        let connection = try Connection(path: path, mode: .readOnly)
        let recent = try connection.scalarInt("SELECT count(*) FROM by_user_recent") ?? -1
        let oldestRecent = try connection.scalarInt("SELECT coalesce(min(seq), 0) FROM by_user_recent") ?? -1
        // Both levels hold entries, and nothing listed before the last round of slices is still recent.
        let main = try connection.scalarInt("SELECT count(*) FROM by_user") ?? 0
        #expect(recent > 0 && main > recent)
        #expect(
            oldestRecent > lastSeqs[lastSeqs.count - 1 - Int(UserKeys.fewestSlices)],
            "oldest recent seq \(oldestRecent)")
    }

    /// A batch's records, not its commit, count toward a round: a batch of a quarter of `roundRecords` moves four
    /// of the round's 16 slices, one of the whole round moves them all (a fill's commits of 65,536 records left most
    /// entries of a 10,000,000-record journal in the recent level when each moved one slice). Every entry is put
    /// back in the recent level first, so that every slice has entries to move.
    @Test func aLargeBatchMovesAsManySlicesAsItsRecordsNeed() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (_, lastSeqs) = try journal(users: 1500, seed: 3)
        let lastSeq = lastSeqs[lastSeqs.count - 1]
        #expect(UserKeys.slices(forRecords: lastSeq) == UserKeys.fewestSlices)
        let connection = try Connection(path: path, mode: .readWrite)
        try connection.execute("INSERT INTO by_user_recent SELECT * FROM by_user; DELETE FROM by_user")
        let records = try connection.scalarInt("SELECT count(*) FROM records") ?? -1
        let sliceWidth = (try UserKeys.nextKey(on: connection) - 1) / UserKeys.fewestSlices + 1
        let oldest = try connection.scalarInt("SELECT min(k) FROM by_user_recent") ?? -1
        let inFourSlices = try connection.scalarInt(
            "SELECT count(*) FROM by_user_recent WHERE k < \(oldest + 4 * sliceWidth)")
        #expect(oldest >= 0 && (inFourSlices ?? 0) > 0 && (inFourSlices ?? 0) < records)

        let cursor = try UserKeys.moveSlice(
            from: nil, lastSeq: lastSeq, batchRecords: UserKeys.roundRecords / 4, on: connection)
        #expect(cursor == oldest + 4 * sliceWidth)
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user") == inFourSlices)
        #expect(try connection.scalarInt("SELECT min(k) FROM by_user_recent") == cursor)

        _ = try UserKeys.moveSlice(from: cursor, lastSeq: lastSeq, batchRecords: UserKeys.roundRecords, on: connection)
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user_recent") == 0)
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user") == records)
    }

    @Test func readersSeeEveryRecordOnceWhicheverLevelListsIt() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try journal(users: 300, seed: 9)
        // Make every kind of user certain: some listed only in the main level, some only in the recent one, some
        // split between them (their first record moved back to the recent level).
        let connection = try Connection(path: path, mode: .readWrite)
        try connection.execute(
            """
            INSERT INTO by_user_recent SELECT * FROM by_user WHERE k % 3 = 0;
            DELETE FROM by_user WHERE k % 3 = 0;
            INSERT INTO by_user SELECT * FROM by_user_recent WHERE k % 3 = 1;
            DELETE FROM by_user_recent WHERE k % 3 = 1;
            INSERT INTO by_user_recent SELECT * FROM by_user b WHERE k % 3 = 2
                AND ts = (SELECT min(ts) FROM by_user WHERE k = b.k);
            DELETE FROM by_user WHERE (k, kind, ts, seq) IN (SELECT k, kind, ts, seq FROM by_user_recent);
            """)
        // The first and the last user (in byte order) listed only in the recent level, and the last but one only
        // in the main level: the merge must hand over recent-only users before and after every main one.
        for (user, level, other) in [
            ("min(user)", "by_user_recent", "by_user"), ("max(user)", "by_user_recent", "by_user"),
            ("max(user) FROM records WHERE user < (SELECT max(user)", "by_user", "by_user_recent"),
        ] {
            let key = "(SELECT k FROM users WHERE user = (SELECT \(user) FROM records\(user.contains("<") ? ")" : "")))"
            try connection.execute(
                """
                INSERT OR IGNORE INTO \(level) SELECT * FROM \(other) WHERE k = \(key);
                DELETE FROM \(other) WHERE k = \(key);
                """)
        }
        #expect(try connection.scalarInt("SELECT count(DISTINCT k) FROM by_user WHERE k % 3 = 2") ?? 0 > 10)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        let expected = try expected()
        let (order, ids, readAll) = try read()
        #expect(readAll)
        #expect(order == expected.map(\.user))
        #expect(expected.allSatisfy { ids[$0.user] == $0.ids })
        // A user's history by name reads both levels too.
        let reader = try Connection(path: path, mode: .readOnly)
        for (user, userIDs) in expected.prefix(30) {
            #expect(try RecordQueries.records(of: user, on: reader).map(\.id).sorted() == userIDs)
        }
        // Stopping after any number of users hands over exactly the first ones, and says whether any is left.
        for stop in 1...expected.count {
            let (stopped, _, stoppedAll) = try read(stopAfter: stop)
            #expect(stopped == Array(expected.prefix(stop).map(\.user)))
            #expect(stoppedAll == (stop == expected.count), "stop after \(stop) of \(expected.count)")
        }
        // Resuming after any user hands over exactly the next ones.
        for (index, resumeAfter) in expected.map(\.user).enumerated().filter({ $0.offset % 17 == 0 }) {
            let rest = expected.dropFirst(index + 1).map(\.user)
            let (resumed, _, all) = try read(after: resumeAfter)
            #expect(resumed == rest && all)
            for stop in [1, 2, rest.count - 1, rest.count] where stop > 0 && stop <= rest.count {
                let (stopped, _, stoppedAll) = try read(after: resumeAfter, stopAfter: stop)
                #expect(stopped == Array(rest.prefix(stop)))
                #expect(stoppedAll == (stop == rest.count), "stop after \(stop) of \(rest.count)")
            }
        }
    }

    @Test(arguments: [
        ("INSERT INTO by_user_recent SELECT * FROM by_user LIMIT 1", "listed in two levels"),
        ("DELETE FROM by_user_recent WHERE seq = (SELECT max(seq) FROM by_user_recent)", "per-user index entries"),
        ("UPDATE by_user_recent SET k = k + 1 WHERE seq = (SELECT max(seq) FROM by_user_recent)", "in by_user_recent"),
        // The records' bodies (schema 15), in either level.
        (
            "UPDATE by_user SET body = CAST('x' AS BLOB) WHERE seq = (SELECT min(seq) FROM by_user WHERE kind = 2)",
            "in by_user)"
        ),
        (
            "UPDATE by_user_recent SET body = body || x'00' WHERE seq = (SELECT max(seq) FROM by_user_recent)",
            "in by_user_recent"
        ),
        ("UPDATE by_user SET body = substr(body, 1, length(body) - 1) || '0' WHERE seq = 1", "in by_user)"),
    ])
    func verifyFindsAnEntryThatIsWrongMissingTwiceOrMiscopied(_ tampering: String, _ named: String) throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try journal(users: 100, seed: 4)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        try Connection(path: path, mode: .readWrite).execute(tampering)
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.map(\.name).contains("the per-user index lists every record once, under its user"))
        #expect(failed.flatMap(\.problems).contains { $0.contains(named) }, "\(failed.flatMap(\.problems))")
    }

    @Test func anEntryListedInBothLevelsDoesNotStopLaterBatches() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (writer, _) = try journal(users: 300, seed: 6)
        let connection = try Connection(path: path, mode: .readWrite)
        try connection.execute("INSERT INTO by_user SELECT * FROM by_user_recent")
        #expect(try !JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        // A round of slices later, every entry has been moved (or dropped as already there), and verify passes.
        for round in 0..<Int(UserKeys.fewestSlices) {
            let line = JournalRecordLines.capabilities("late-\(round)", user: "late-user-\(round)")
            #expect(try writer.append([try JournalRecordLines.submission(line)], receivedAt: 0).count == 1)
        }
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user_recent WHERE seq < 100") == 0)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    /// A daemon that keeps restarting (a crash loop, a test machine) commits a batch or two per run; each run's
    /// first slice starts at the oldest entry left, so the recent level still empties.
    @Test func writersThatCommitOnceEachStillEmptyTheRecentLevel() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (first, _) = try journal(users: 1500, seed: 8)
        let before = try first.lastSeq()
        first.close()
        for run in 0..<(Int(UserKeys.fewestSlices) + 4) {
            let writer = try JournalWriter(path: path, durability: .normal)
            let line = JournalRecordLines.capabilities("restart-\(run)", user: "restarting-user")
            #expect(try writer.append([try JournalRecordLines.submission(line)], receivedAt: 0).count == 1)
            writer.close()
        }
        let connection = try Connection(path: path, mode: .readOnly)
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user_recent WHERE seq <= \(before)") == 0)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }
    /// Migration 15 copies every entry's record columns into both levels: each user's records read back from the
    /// index are what they were, and `verify` (which compares every copy with its record) passes.
    @Test func schema15CopiesEveryRecordsColumnsIntoBothLevels() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (writer, _) = try journal(users: 300, seed: 11)
        writer.close()
        let connection = try Connection(path: path, mode: .readWrite)
        func histories() throws -> [String: [Record]] {
            var all: [String: [Record]] = [:]
            let users = try connection.prepare("SELECT user FROM users")
            while try users.step() {
                let user = users.text(0) ?? ""
                all[user] = try RecordQueries.records(of: user, on: connection).sorted { $0.id < $1.id }
            }
            return all
        }
        let before = try histories()
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user_recent") ?? 0 > 0)
        for level in ["by_user", "by_user_recent"] {
            try connection.execute(
                """
                CREATE TABLE narrow (k INTEGER NOT NULL, kind INTEGER NOT NULL, ts INTEGER NOT NULL, seq INTEGER NOT NULL,
                    PRIMARY KEY (k, kind, ts, seq)) WITHOUT ROWID;
                INSERT INTO narrow SELECT k, kind, ts, seq FROM \(level);
                DROP TABLE \(level);
                ALTER TABLE narrow RENAME TO \(level);
                """)
        }
        // Back to schema 14: later migrations' tables go too.
        try connection.execute(
            """
            DROP TABLE sealed_presentations; DROP TABLE sealed_users; DROP TABLE sealed_ids; DROP TABLE user_partitions;
            DROP TABLE saved_summaries; DROP TABLE by_user_sealed;
            PRAGMA user_version = 14
            """)
        _ = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        #expect(try connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        #expect(try histories() == before)
        let listed = Int64(before.values.reduce(0) { $0 + $1.count })
        #expect(try connection.scalarInt("SELECT count(*) FROM records") == listed)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    /// `rebuild` lists every record again from `records` alone: a user with records keeps their key, a user
    /// without records is forgotten, a user whose key was lost is given one again, and every record is listed
    /// under its user's key, all of it in `by_user`.
    @Test func rebuildKeepsKeysForgetsUsersWithoutRecordsAndGivesMissingOnes() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (writer, _) = try journal(users: 200, seed: 5)
        writer.close()
        let connection = try Connection(path: path, mode: .readWrite)
        let before = try expected()
        let (kept, lost) = (before[0].user, before[1].user)
        let keptKey = try connection.scalarInt("SELECT k FROM users WHERE user = '\(kept)'")
        try connection.execute(
            """
            INSERT INTO users (user) VALUES ('nobody-with-records');
            DELETE FROM users WHERE user = '\(lost)';
            DELETE FROM by_user WHERE k % 3 = 0;
            """)
        try connection.transaction { try UserKeys.rebuild(on: connection) }
        #expect(try connection.scalarInt("SELECT k FROM users WHERE user = '\(kept)'") == keptKey)
        #expect(try connection.scalarInt("SELECT count(*) FROM users WHERE user = 'nobody-with-records'") == 0)
        #expect(try connection.scalarInt("SELECT k FROM users WHERE user = '\(lost)'") != nil)
        #expect(try connection.scalarInt("SELECT count(*) FROM users") == Int64(before.count))
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user_recent") == 0)
        let records = try connection.scalarInt("SELECT count(*) FROM records")
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user") == records)
        let (_, histories, readAll) = try read()
        #expect(readAll)
        #expect(before.allSatisfy { histories[$0.user] == $0.ids })
    }

    /// A user new to the journal is listed straight in the main level by the batch that gives them their key
    /// (after every entry there, so on its last pages); a user who had a key before the batch, in the recent
    /// level. Readers and `verify` see both alike.
    @Test func aNewUsersFirstBatchIsListedStraightInTheMainLevel() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        func append(_ checks: [(id: String, user: String)]) throws {
            let lines = checks.enumerated().map { index, check in
                JournalRecordLines.capabilities(
                    check.id, user: check.user, ts: "2026-11-28T10:00:00.\(String(1000 + index).dropFirst())Z")
            }
            _ = try writer.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        }
        let connection = try Connection(path: path, mode: .readOnly)
        func listed(_ level: String, _ user: String) throws -> Int64? {
            try connection.scalarInt(
                "SELECT count(*) FROM \(level) WHERE k = (SELECT k FROM users WHERE user = '\(user)')")
        }
        // 64 users, keys 1 to 64, all new: all in the main level. The commit's slice (keys 0 to 4) moves nothing.
        try append((1...64).map { ("a\($0)", "user-\($0)") })
        #expect(try connection.scalarInt("SELECT count(*) FROM by_user") == 64)
        // `user-1` again, and a new user (key 65): the slice (keys 5 to 9) moves neither.
        try append([("b1", "user-1"), ("b2", "new"), ("b3", "new")])
        #expect(try listed("by_user", "new") == 2)
        #expect(try listed("by_user_recent", "new") == 0)
        #expect(try listed("by_user", "user-1") == 1)
        #expect(try listed("by_user_recent", "user-1") == 1)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        let (_, ids, readAll) = try read()
        #expect(readAll)
        #expect(ids["new"] == ["b2", "b3"] && ids["user-1"] == ["a1", "b1"] && ids.count == 65)
    }
}
