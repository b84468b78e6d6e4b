import Foundation
import OfferTrackDomain
import SQLite
import Simulator
import TestSupport
import Testing

@testable import AttributionJoin
@testable import JournalStore
@testable import JournalVerification

/// The journal writer against a real SQLite file: idempotency, migrations, the join kept current.
@Suite struct JournalWriterTests {
    let path = "/tmp/journal-test-\(UInt32.random(in: 0...UInt32.max)).db"

    @Test func duplicatesAndConflictsAreDecidedWithinOneBatchToo() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let same = JournalRecordLines.capabilities("a")
        let other = JournalRecordLines.capabilities("a", ts: "2026-11-28T10:00:01Z")
        let outcomes = try writer.append(
            [
                try JournalRecordLines.submission(same), try JournalRecordLines.submission(same),
                try JournalRecordLines.submission(other),
                try JournalRecordLines.submission(JournalRecordLines.capabilities("b")),
            ],
            receivedAt: 0)
        #expect(outcomes == [.accepted(seq: 1), .duplicate(seq: 1), .conflict, .accepted(seq: 2)])
        #expect(try writer.lastSeq() == 2)
    }

    @Test func aVersion1JournalIsMigratedAndItsDerivedTablesComputed() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        // A journal as version 1 left it: records only.
        let old = try Connection(path: path, mode: .readWriteCreate)
        try old.execute(
            """
            \(LegacySchema.version1Tables)
            INSERT INTO records VALUES (1, 'p1', 1, 1000, 'u', 0, NULL, NULL, 1, NULL, 'aff', NULL, NULL, NULL, '{}');
            PRAGMA user_version = 1;
            """)
        _ = old
        let writer = try JournalWriter(path: path, durability: .full, schema: .migrate)
        _ = writer
        let check = try Connection(path: path, mode: .readOnly)
        #expect(try check.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        #expect(try check.scalarInt("SELECT count(*) FROM derived_presentations") == 1)
    }

    @Test func aNewerSchemaIsRefused() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let newer = try Connection(path: path, mode: .readWriteCreate)
        try newer.execute("PRAGMA user_version = 99")
        #expect(throws: Schema.NewerSchemaError.self) {
            try JournalWriter(path: path, durability: .full, schema: .migrate)
        }
    }

    @Test func theJoinFollowsLateRecordsExactlyAsARebuild() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        // An outcome before its presentation, and the eligibility check last of all.
        let lines = [
            #"{"type":"subscription.outcome","id":"o1","ts":"2026-11-28T10:05:00Z","user":"u","outcome":"subscribed"}"#,
            #"{"type":"offer.presented","id":"p1","ts":"2026-11-28T10:01:00Z","user":"u","offer":{"action":"subscribe","affiliateToken":"aff"}}"#,
            JournalRecordLines.capabilities("c1", ts: "2026-11-28T10:00:00Z"),
        ]
        for line in lines { _ = try writer.append([try JournalRecordLines.submission(line)], receivedAt: 0) }
        let reader = try ReadOnlyJournal(path: path)
        let incremental = try FunnelQuery.rows(reader, grouping: .affiliate, range: .all, rules: .defaults, asOf: .max)
        #expect(
            incremental == [ReportRow(key: "aff", presented: 1, presentedEligible: 1, conversions: 1, attributed: 1)])
        try writer.rebuildDerivedTables(settings: .defaults)
        #expect(
            try FunnelQuery.rows(reader, grouping: .affiliate, range: .all, rules: .defaults, asOf: .max) == incremental
        )
        #expect(try JournalVerifier.verify(reader).allSatisfy(\.passed))
    }
}

extension JournalWriterTests {
    @Test func verifyCatchesADerivedRowThatNoLongerMatchesTheJournal() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = [
            JournalRecordLines.capabilities("c1"),
            #"{"type":"offer.presented","id":"p1","ts":"2026-11-28T10:01:00Z","user":"u","offer":{"action":"subscribe"}}"#,
        ]
        _ = try writer.append(lines.map { try JournalRecordLines.submission($0) }, receivedAt: 0)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        let tamper = try Connection(path: path, mode: .readWriteCreate)
        try tamper.execute("UPDATE derived_presentations SET eligible = 0")
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }.map(\.name)
        #expect(failed == ["derived tables equal a fresh recomputation", "daily roll-ups equal the derived rows"])
    }
}

/// The writer's knowledge of which users have records (it lets the join skip the index probe for new users):
/// wherever it comes from, the derived tables must equal a recomputation.
extension JournalWriterTests {
    func attributedConversions() throws -> Int64? {
        try Connection(path: path, mode: .readOnly).scalarInt(
            "SELECT count(*) FROM derived_conversions WHERE reason IS NULL")
    }

    @Test func aFreshJournalNeedsNoLearningAndARestartedWriterLearnsEveryUser() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try first.append(
            [try JournalRecordLines.submission(JournalRecordLines.capabilities("c0", user: "z"))], receivedAt: 0)
        #expect(!first.needsToLearnUsers)
        // One user with more records than a chunk reads, then others after it.
        var lines = (1...5).map { JournalRecordLines.capabilities("a\($0)", user: "a", ts: "2026-11-28T10:00:0\($0)Z") }
        lines += ["b", "c", "d"].map { JournalRecordLines.capabilities("c-\($0)", user: $0) }
        _ = try first.append(try lines.map(JournalRecordLines.submission), receivedAt: 0)
        first.close()

        let restarted = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        #expect(restarted.needsToLearnUsers)
        var chunks = 0
        while try restarted.learnJournaledUsers(limit: 2) { chunks += 1 }
        #expect(!restarted.needsToLearnUsers)
        #expect(restarted.learnedUsers.count == 5)
        // `users` holds one entry per user (schema 8), however many records: 5 users in chunks of 2, 2 and 1.
        #expect(chunks == 2)
        // Each returning user's late records still join with what was journaled before the restart.
        let late = [
            JournalRecordLines.presented("p-b", user: "b", ts: "2026-11-28T10:00:10Z"),
            JournalRecordLines.subscribed("o-b", user: "b", ts: "2026-11-28T10:00:20Z"),
            JournalRecordLines.subscribed("o-n", user: "new", ts: "2026-11-28T10:00:20Z"),
        ]
        _ = try restarted.append(try late.map(JournalRecordLines.submission), receivedAt: 0)
        #expect(try attributedConversions() == 1)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }

    @Test func recordsAppendedByAnotherConnectionAreNotMistakenForNewUsers() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try writer.append(
            [try JournalRecordLines.submission(JournalRecordLines.capabilities("c1", user: "x"))], receivedAt: 0)
        #expect(!writer.needsToLearnUsers)
        // Another process appends user y's presentation; this writer never saw y.
        let other = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        _ = try other.append(
            [
                try JournalRecordLines.submission(
                    JournalRecordLines.presented("p-y", user: "y", ts: "2026-11-28T10:00:10Z"))
            ], receivedAt: 0)
        other.close()
        // A batch of nothing new first: it must not hide the other writer's records.
        _ = try writer.append(
            [try JournalRecordLines.submission(JournalRecordLines.capabilities("c1", user: "x"))], receivedAt: 0)
        _ = try writer.append(
            [
                try JournalRecordLines.submission(
                    JournalRecordLines.subscribed("o-y", user: "y", ts: "2026-11-28T10:00:20Z"))
            ], receivedAt: 0)
        #expect(writer.needsToLearnUsers)
        #expect(try attributedConversions() == 0)  // y was not checked eligible: outside the funnel, but joined
        let reason = try Connection(path: path, mode: .readOnly).scalarText(
            "SELECT reason FROM derived_conversions WHERE id = 'o-y'")
        #expect(reason == UnattributedReason.eligibilityUnknown.rawValue)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
    }
}

extension JournalWriterTests {
    @Test func bigBatchesWithRepeatsConflictsAndReturningUsersJoinExactly() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        // Simulated lines (with their ~2% exact repeats), in batches big enough for the background plan.
        let lines = Array(WorkloadSimulator(users: 1500, seed: 5, days: 2).lines)
        var batches = stride(from: 0, to: lines.count, by: 1000).map { Array(lines[$0..<min($0 + 1000, lines.count)]) }
        // Later batches also repeat lines of the first (users seen before), and one reuses an id with new content.
        batches[1] += Array(batches[0].prefix(300))
        let conflicting = batches[0][0].replacingOccurrences(of: "\"ts\":\"2026-", with: "\"ts\":\"2027-")
        batches[2].insert(conflicting, at: 10)
        var statuses: [String: Int] = [:]
        for batch in batches {
            #expect(batch.count >= BatchJoinPlan.backgroundThreshold)
            for outcome in try writer.append(try batch.map(JournalRecordLines.submission), receivedAt: 0) {
                switch outcome {
                case .accepted: statuses["accepted", default: 0] += 1
                case .duplicate: statuses["duplicate", default: 0] += 1
                case .conflict: statuses["conflict", default: 0] += 1
                case .expired: statuses["expired", default: 0] += 1
                }
            }
        }
        #expect(statuses["conflict"] == 1)
        #expect((statuses["duplicate"] ?? 0) > 300)
        let reader = try ReadOnlyJournal(path: path)
        #expect(try JournalVerifier.verify(reader).allSatisfy(\.passed))
        let incremental = try FunnelQuery.rows(reader, grouping: .affiliate, range: .all, rules: .defaults, asOf: .max)
        try writer.rebuildDerivedTables(settings: .defaults)
        #expect(
            try FunnelQuery.rows(reader, grouping: .affiliate, range: .all, rules: .defaults, asOf: .max) == incremental
        )
    }
}

extension JournalWriterTests {
    @Test(arguments: ["DELETE FROM presentation_rollup WHERE dimension = 1", "DELETE FROM conversion_days"])
    func verifyCatchesARollUpGroupThatIsMissing(_ tampering: String) throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        let lines = [
            JournalRecordLines.capabilities("c1"),
            JournalRecordLines.presented("p1", user: "u", ts: "2026-11-28T10:01:00Z"),
            JournalRecordLines.subscribed("o1", user: "u", ts: "2026-11-28T10:02:00Z"),
        ]
        _ = try writer.append(lines.map { try JournalRecordLines.submission($0) }, receivedAt: 0)
        #expect(try JournalVerifier.verify(try ReadOnlyJournal(path: path)).allSatisfy(\.passed))
        try Connection(path: path, mode: .readWriteCreate).execute(tampering)
        let failed = try JournalVerifier.verify(try ReadOnlyJournal(path: path)).filter { !$0.passed }
        #expect(failed.map(\.name) == ["daily roll-ups equal the derived rows"])
    }

    @Test func version3IsMigratedToSlimPresentationsAndRollUpsSplitByDimension() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try Connection(path: path, mode: .readWriteCreate)
        for sql in Schema.sql(through: 3) { try connection.execute(sql) }
        try connection.execute(
            """
            PRAGMA user_version = 3;
            INSERT INTO presentation_days VALUES (20000, 'a', 'c1', 'join', 2, 1), (20000, 'a', '', 'join', 1, 0),
                (20000, 'b', 'c1', 'playMusic', 1, 1), (20001, '', '', 'join', 4, 4);
            INSERT INTO records (seq, id, type, ts, user, received_at, loaded, line)
                VALUES (7, 'p1', 1, 1728000000000, 'u', 0, 1, '{}');
            INSERT INTO derived_presentations VALUES (1728000000000, 'p1', 'u', 'a', 'c1', 'join', '144', 1);
            """)
        try Schema.migrate(connection)
        #expect(try connection.scalarInt("PRAGMA user_version") == Schema.currentVersion)
        let rows = try connection.prepare(
            "SELECT day, dimension, value, presented, eligible FROM presentation_rollup ORDER BY 1, 2, 3")
        var found: [String] = []
        while try rows.step() {
            found.append("\(rows.int64(0)) \(rows.int64(1)) \(rows.text(2) ?? "?") \(rows.int64(3)) \(rows.int64(4))")
        }
        rows.reset()
        #expect(
            found == [
                "20000 0 a 3 1", "20000 0 b 1 1", "20000 1  1 0", "20000 1 c1 3 2", "20000 2 join 3 1",
                "20000 2 playMusic 1 1", "20001 0  4 4", "20001 1  4 4", "20001 2 join 4 4",
            ])
        #expect(try connection.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'presentation_days'") == 0)
        // Derived presentations keep what the join decided; the offer is read from the record.
        #expect(
            try connection.scalarText("SELECT ts || ' ' || seq || ' ' || eligible FROM derived_presentations")
                == "1728000000000 7 1")
        #expect(try connection.scalarInt("SELECT count(*) FROM pragma_table_info('derived_presentations')") == 3)
    }
}

extension JournalWriterTests {
    /// Version 4 had no holding period: its derived tables are those of H = 0, under which nothing lapses.
    @Test func version4IsMigratedToHoldingPeriodZeroWithNothingLapsed() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try Connection(path: path, mode: .readWriteCreate)
        for sql in Schema.sql(through: 4) { try connection.execute(sql) }
        try connection.execute(
            """
            PRAGMA user_version = 4;
            INSERT INTO meta VALUES ('derived_window_ms', '2592000000'), ('derived_freshness_ms', '86400000');
            INSERT INTO records (id, type, ts, user, received_at, subscribed, line) VALUES ('o1', 2, 5, 'u', 5, 1, '{}');
            INSERT INTO derived_conversions (ts, id, user, reason) VALUES (5, 'o1', 'u', NULL);
            INSERT INTO conversion_days VALUES (0, 1, 'a', '', 'join', 3), (0, 0, '', '', '', 2);
            """)
        try Schema.migrate(connection)
        // Computed before rule 4.0 too: with no shared users (a start under the SPEC's list recomputes).
        var computed = AttributionSettings.defaults
        computed.sharedUsers = .none
        #expect(try DerivedTables.settings(on: connection) == computed)
        #expect(try connection.scalarInt("SELECT count(*) FROM derived_conversions WHERE lapse_id IS NULL") == 1)
        #expect(
            try connection.scalarText("SELECT group_concat(attributed || lapsed || conversions) FROM conversion_days")
                == "002,103")
        // A journal whose derived tables were never computed stays so.
        try FileManager.default.removeItem(atPath: path)
        let fresh = try Connection(path: path, mode: .readWriteCreate)
        for sql in Schema.sql(through: 4) { try fresh.execute(sql) }
        try fresh.execute("PRAGMA user_version = 4")
        try Schema.migrate(fresh)
        #expect(try DerivedTables.settings(on: fresh) == nil)
    }

    @Test func aReaderRefusesAJournalOfAnotherSchemaInsteadOfMisreadingIt() throws {
        defer { try? FileManager.default.removeItem(atPath: path) }
        let connection = try Connection(path: path, mode: .readWriteCreate)
        for sql in Schema.sql(through: 3) { try connection.execute(sql) }
        try connection.execute("PRAGMA user_version = 3")
        let refusal = #expect(throws: ReadOnlyJournal.OpenError.self) { try ReadOnlyJournal(path: path) }
        #expect(
            "\(String(describing: refusal))".contains("has schema 3 and this offertrack reads \(Schema.currentVersion)")
        )
        // `status` still reads the records of any version.
        #expect(try ReadOnlyJournal(path: path, requiringCurrentSchema: false).lastSeq() == 0)
        // The daemon's writer migrates it; then every command reads it.
        _ = try JournalWriter(path: path, durability: .normal, schema: .migrate)
        #expect(try ReadOnlyJournal(path: path).schemaVersion() == Schema.currentVersion)
        try connection.execute("PRAGMA user_version = 99")
        #expect(throws: ReadOnlyJournal.OpenError.self) { try ReadOnlyJournal(path: path) }
    }
}
