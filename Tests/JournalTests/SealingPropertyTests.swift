import AttributionJoin
import Foundation
import JournalSealing
import JournalVerification
import OfferTrackDomain
import OutputFormats
import Publishing
import SQLite
import TestSupport
import Testing
import WireFormat

@testable import JournalStore

/// SPEC section 12's contract, differentially: two journals sent the same accepted records, one of them sealed at
/// random days between deliveries, give the same report (every grouping, ranges and `--as-of`), the same
/// explanation of every user and of every record id that still explains (the others exit 66: sealed and not
/// named), the same export of every day (published before the seal: byte for byte) and the same payout statement,
/// under rules with the same W and F and any H, amounts, holds and shared users. A record the sealed journal
/// refuses `expired` is before its horizon, and is not sent to the other.
@Suite struct SealingPropertyTests {
    /// 2026-03-01T00:00Z: records fill the 16 days from it.
    static let start: Int64 = 1_772_323_200_000
    static let day = Timestamp.millisecondsPerDay
    static let days = 16

    /// W = 6 h and F = 2 h (K = 1 day), R = 3 days: sealing leaves 3 days raw.
    static func rules(holdingHours: Int, amount: Int, hold: Bool, shared: String) throws -> RulesFile {
        let json = """
            {"currency":"EUR","attributionWindowHours":6,"eligibilityFreshnessHours":2,
             "holdingPeriodHours":\(holdingHours),"retentionDays":3,\(shared)
             "rules":[{"affiliateToken":"*","amountMinor":\(amount)},
                      {"affiliateToken":"b2","amountMinor":\(amount * 3),"hold":\(hold)}]}
            """
        return try RulesFile(bytes: Array(json.utf8))
    }

    static func variants() throws -> [RulesFile] {
        [
            try rules(holdingHours: 5, amount: 100, hold: false, shared: ""),
            try rules(holdingHours: 0, amount: 250, hold: true, shared: #""sharedUsers":["u4"],"#),
            try rules(holdingHours: 60, amount: 7, hold: false, shared: #""sharedUsers":[],"#),
        ]
    }

    /// Random records of `users` users over the days `[firstDay, lastDay)`: every type, equal minutes, offerIds
    /// naming presentations of any day, reviews naming earlier conversions, erasures, a shared id.
    static func lines(
        _ random: inout SeededGenerator, users: Int, count: Int, days: Range<Int>, tag: String,
        conversions: inout [String], presentations: inout [String: [String]]
    ) -> [String] {
        var lines: [String] = []
        for index in 0..<count {
            let number = Int.random(in: 0..<users, using: &random)
            let user = number == 0 ? "Guest" : "u\(number)"
            let minute = Int.random(in: (days.lowerBound * 1440)..<(days.upperBound * 1440), using: &random)
            let ts = Timestamp.format(start + Int64(minute) * 60_000)
            let id = RandomRecordLines.id(tag: tag, index: index, user: user, &random)
            let head = #""id":"\#(id)","ts":"\#(ts)","user":"\#(user)""#
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                lines.append(RandomRecordLines.capabilities(head: head, &random))
            case 30..<62:
                lines.append(RandomRecordLines.presented(head: head, campaigns: true, &random))
                presentations[user, default: []].append(id)
            case 62..<88:
                let outcome = Int.random(in: 0..<3, using: &random) == 0 ? "declined" : "subscribed"
                var named = ""
                if let own = presentations[user], !own.isEmpty, Int.random(in: 0..<2, using: &random) == 0 {
                    named = #","offerId":"\#(own.randomElement(using: &random) ?? "x")""#
                }
                lines.append(#"{"type":"subscription.outcome",\#(head),"outcome":"\#(outcome)"\#(named)}"#)
                if outcome == "subscribed" { conversions.append(id) }
            case 88..<97:
                guard let conversion = conversions.randomElement(using: &random) else { continue }
                lines.append(RandomRecordLines.review(head: head, conversion: conversion, &random))
            default:
                // A shared id names no person: it cannot be erased.
                guard number != 0 else { continue }
                lines.append(#"{"type":"erasure",\#(head),"ticket":"DSR-\#(id)"}"#)
            }
        }
        return lines
    }

    /// Users who see offers on the first four days and convert only after both seals, three of them naming one of
    /// those offers: rules 4.2 and 4.4 then read presentations and checks that sealing kept.
    static func lateConverters(_ random: inout SeededGenerator, tag: String) -> (early: [String], late: [String]) {
        var early: [String] = []
        var late: [String] = []
        for number in 1...4 {
            let user = "late\(number)"
            var offers: [String] = []
            for index in 0..<8 {
                let minute = Int.random(in: 0..<(4 * 1440), using: &random)
                let id = "\(tag)e\(index)-\(user)"
                let head =
                    #""id":"\#(id)","ts":"\#(Timestamp.format(start + Int64(minute) * 60_000))","user":"\#(user)""#
                if index % 2 == 0 {
                    early.append(RandomRecordLines.capabilities(head: head, &random))
                } else {
                    early.append(RandomRecordLines.presented(head: head, campaigns: true, &random))
                    offers.append(id)
                }
            }
            let minute = Int.random(in: (14 * 1440)..<(16 * 1440), using: &random)
            let head =
                #""id":"\#(tag)c-\#(user)","ts":"\#(Timestamp.format(start + Int64(minute) * 60_000))","user":"\#(user)""#
            let named = number == 4 ? "" : #","offerId":"\#(offers.randomElement(using: &random) ?? "x")""#
            late.append(#"{"type":"subscription.outcome",\#(head),"outcome":"subscribed"\#(named)}"#)
        }
        return (early, late)
    }

    /// A person seen on days 0 and 1 (checks and offers, all kept by sealing: no conversion yet) whose erasure's
    /// name already has a record of its own, so that the erasure, delivered after the first seal with the person's
    /// conversion naming one of those offers, merges two users and what sealing kept of both (SPEC 11 and 12),
    /// and moves a sealed day's eligible count (`SealedMergeTests` has the case by hand).
    static func mergedPerson(_ random: inout SeededGenerator, tag: String) -> (early: [String], late: [String]) {
        let user = "m\(tag)"
        let erasure = "\(tag)E-\(user)"
        func head(_ id: String, minute: Int, user: String = user) -> String {
            #""id":"\#(id)","ts":"\#(Timestamp.format(start + Int64(minute) * 60_000))","user":"\#(user)""#
        }
        // The name's own check (eligible) 15 minutes before one of the person's offers: merged, that offer of a
        // sealed day reads it (unless one of the person's checks falls between), and the sealed day's count follows.
        var early = [
            #"{"type":"capabilities",\#(head("\(tag)m0", minute: 30, user: "erased:\(erasure)")),"authorization":3,"capabilities":2}"#,
            #"{"type":"offer.presented",\#(head("\(tag)m7", minute: 45)),"offer":{"action":"subscribe","affiliateToken":"b2"}}"#,
        ]
        var offers: [String] = []
        for index in 1...6 {
            let id = "\(tag)m\(index)"
            let minute = Int.random(in: 0..<(2 * 1440), using: &random)
            if index % 2 == 1 {
                early.append(RandomRecordLines.capabilities(head: head(id, minute: minute), &random))
            } else {
                early.append(RandomRecordLines.presented(head: head(id, minute: minute), campaigns: true, &random))
                offers.append(id)
            }
        }
        let converts = head("\(tag)m-c", minute: 14 * 1440 + 90)
        let late = [
            #"{"type":"subscription.outcome",\#(converts),"outcome":"subscribed","offerId":"\#(offers[0])"}"#,
            #"{"type":"erasure",\#(head(erasure, minute: 14 * 1440)),"ticket":"DSR-merge"}"#,
        ]
        return (early, late)
    }

    /// Two journals and what the sealed one refused.
    struct Pair {
        let plain: JournalWriter
        let sealed: JournalWriter
        let plainPath: String
        let sealedPath: String
        var expired = 0
        var sealedRuns = 0

        /// Delivers `lines` shuffled in random batches to the sealed journal, and what it journaled to the other.
        mutating func deliver(_ lines: [String], random: inout SeededGenerator) throws {
            var pending = lines.shuffled(using: &random)
            while !pending.isEmpty {
                let size = min(pending.count, Int.random(in: 1...120, using: &random))
                let batch = try pending.prefix(size).map(JournalRecordLines.submission)
                pending.removeFirst(size)
                let outcomes = try sealed.append(batch, receivedAt: 0)
                let horizon = try ReadOnlyJournal(path: sealedPath).sealState()?.horizon ?? .min
                var forwarded: [Submission] = []
                for (submission, outcome) in zip(batch, outcomes) {
                    if case .expired(let at) = outcome {
                        #expect(at == horizon && submission.record.ts < horizon, "\(submission.record.id)")
                        expired += 1
                    } else {
                        // Before the horizon nothing is accepted: a duplicate or a conflict only (the journal first).
                        if case .accepted = outcome {
                            #expect(submission.record.ts >= horizon, "\(submission.record.id)")
                        }
                        forwarded.append(submission)
                    }
                }
                let plainOutcomes = try plain.append(forwarded, receivedAt: 0)
                let sealedOutcomes = outcomes.filter { if case .expired = $0 { false } else { true } }
                // Same verdicts, seqs aside: both journaled the same records.
                #expect(plainOutcomes.map(Self.verdict) == sealedOutcomes.map(Self.verdict))
            }
        }

        static func verdict(_ outcome: AppendOutcome) -> String {
            switch outcome {
            case .accepted: "accepted"
            case .duplicate: "duplicate"
            case .conflict: "conflict"
            case .expired: "expired"
            }
        }

        /// Seals the sealed journal at `asOf` (its removals in chunks of a few users and records: a user's spread
        /// over several).
        mutating func seal(asOf: Int64, rules: RulesFile) throws {
            guard let retention = rules.rules.retention else { return }
            let outcome = try JournalSealer(path: sealedPath, usersPerChunk: 3, recordsPerChunk: 7).seal(
                retention: retention, asOf: asOf)
            if outcome.sealedDays != nil { sealedRuns += 1 }
        }
    }

    @Test func aSealedJournalAnswersAsOneNeverSealed() throws {
        var random = SeededGenerator.announced("sealing property")
        let base = try Self.rules(holdingHours: 5, amount: 100, hold: false, shared: "")
        for round in 0..<3 {
            let scratch = ScratchDirectory("sealing-property")
            var pair = Pair(
                plain: try JournalWriter(
                    path: scratch.path + "/plain.db", durability: .normal, schema: .migrate,
                    settings: base.rules.settings),
                // Bounded lookups for every returning user of the sealed journal: they read what sealing kept.
                sealed: try JournalWriter(
                    path: scratch.path + "/sealed.db", durability: .normal, schema: .migrate,
                    settings: base.rules.settings, tuning: .init(historyLimit: 1)),
                plainPath: scratch.path + "/plain.db", sealedPath: scratch.path + "/sealed.db")
            var conversions: [String] = []
            var presentations: [String: [String]] = [:]
            func lines(_ count: Int, _ days: Range<Int>, _ tag: String) -> [String] {
                Self.lines(
                    &random, users: 12 + round * 8, count: count, days: days, tag: "r\(round)\(tag)",
                    conversions: &conversions, presentations: &presentations)
            }
            let lateConverters = Self.lateConverters(&random, tag: "r\(round)")
            let merged = Self.mergedPerson(&random, tag: "r\(round)")
            try pair.deliver(lines(500, 0..<9, "a") + lateConverters.early + merged.early, random: &random)
            let now = Self.start + 60 * Self.day
            for index in 0..<4 {
                for path in [pair.plainPath, pair.sealedPath] {
                    _ = try CommissionExporter.export(
                        journalPath: path, day: Self.dayText(index), rules: base, now: now)
                }
            }
            // A first seal at a random time of days 5 to 8: days 0 to 1..4 sealed.
            try pair.seal(
                asOf: Self.start + Int64.random(in: (5 * Self.day)..<(9 * Self.day), using: &random), rules: base)
            // Late records (the sealed journal refuses those before its horizon), resent records, reviews of old
            // conversions and erasures, then a second seal and more.
            var late = lines(300, 2..<13, "b")
            late += try Self.resent(from: pair.plainPath, count: 30, random: &random)
            try pair.deliver(late, random: &random)
            try pair.seal(
                asOf: Self.start + Int64.random(in: (10 * Self.day)..<(13 * Self.day), using: &random), rules: base)
            try pair.deliver(lines(200, 9..<Self.days, "c") + lateConverters.late + merged.late, random: &random)
            #expect(pair.sealedRuns >= 1 && pair.expired > 0, "seals \(pair.sealedRuns), expired \(pair.expired)")
            try Self.compare(pair, now: now, random: &random)
            if round == 0 {
                // `offertrack rebuild` lists the records again and keeps what sealing kept: the same answers.
                try pair.sealed.rebuildDerivedTables(settings: base.rules.settings)
                try Self.compare(pair, now: now, random: &random)
            }
        }
    }

    static func dayText(_ index: Int) -> String {
        Timestamp.formatDay(start + Int64(index) * day)
    }

    /// Lines journaled in `path` sent again: some as they are, some with another `ts` (an id conflict).
    static func resent(from path: String, count: Int, random: inout SeededGenerator) throws -> [String] {
        let connection = try Connection(path: path, mode: .readOnly)
        let select = try connection.prepare("SELECT line FROM records WHERE type < 3 ORDER BY random() LIMIT ?1")
        try select.bind(Int64(count), at: 1)
        var lines: [String] = []
        while try select.step() {
            guard let line = select.text(0) else { continue }
            if Bool.random(using: &random), let range = line.range(of: #""ts":"2026-03-"#) {
                // The same id on another day: `id_conflict`, or `expired` before the horizon.
                let digits = range.upperBound..<line.index(range.upperBound, offsetBy: 2)
                let day = String(Int.random(in: 10...16, using: &random))
                lines.append(line.replacingCharacters(in: digits, with: day))
            } else {
                lines.append(line)
            }
        }
        return lines
    }

    /// Every output of both journals, under every rules variant.
    static func compare(_ pair: Pair, now: Int64, random: inout SeededGenerator) throws {
        let plain = try ReadOnlyJournal(path: pair.plainPath)
        let sealed = try ReadOnlyJournal(path: pair.sealedPath)
        let state = try #require(try sealed.sealState())
        let failed = try JournalVerifier.verify(sealed).filter { !$0.passed }
        #expect(failed.isEmpty, "\(failed.map { "\($0.name): \($0.problems.prefix(5))" })")
        let removed = try #require(
            try sealed.connection.scalarInt("SELECT coalesce(sum(records), 0) FROM sealed_users"))
        #expect(removed > 0)
        let firstUnsealed = state.sealedBefore
        let ranges = [
            ReportRange.all, ReportRange(since: start, until: start + Int64(days) * day),
            ReportRange(since: start + day, until: firstUnsealed + 3 * day + 4_321_000),
            ReportRange(since: firstUnsealed + 777_000, until: nil),
        ]
        for rules in try variants() {
            for grouping in ReportGrouping.allCases {
                for range in ranges {
                    for asOf in [start + 4 * day, start + 11 * day + 3_600_000, now] {
                        let expected = try FunnelQuery.rows(
                            plain, grouping: grouping, range: range, rules: rules.rules, asOf: asOf)
                        let got = try FunnelQuery.rows(
                            sealed, grouping: grouping, range: range, rules: rules.rules, asOf: asOf)
                        #expect(got == expected, "report by \(grouping) \(range) as of \(asOf)")
                    }
                }
            }
            try compareExplanations(plain, sealed, rules: rules, asOf: start + 12 * day)
        }
        // A bound inside a sealed day is refused; at its 00:00Z it is not.
        #expect(throws: SealedDays.PartialSealedDay.self) {
            try FunnelQuery.rows(
                sealed, grouping: .day, range: ReportRange(since: firstUnsealed - day + 1, until: nil),
                rules: try variants()[0].rules, asOf: now)
        }
        // Exports: days published before the seal rewrite byte for byte without rules; every other day has the same
        // rows; and so has the month's payout statement.
        let base = try variants()[0]
        for index in 0..<31 {
            let rules: RulesFile? = index < 4 ? nil : base
            let files = try [pair.plainPath, pair.sealedPath].map {
                try CommissionExporter.export(journalPath: $0, day: dayText(index), rules: rules, now: now)
            }
            #expect(files[0].csv == files[1].csv && files[0].manifest == files[1].manifest, "export \(dayText(index))")
        }
        let month = try #require(PayoutMonth(containingDay: dayText(0)))
        let statements = try [pair.plainPath, pair.sealedPath].map {
            try PayoutPublisher.publish(journalPaths: [$0], month: month, rules: base, now: now)
        }
        #expect(statements[0] == statements[1])
    }

    /// `explain` of every user and of every record id: the same, or (an id sealing removed) no answer, and then the
    /// id is named nowhere in its user's explanation.
    static func compareExplanations(
        _ plain: ReadOnlyJournal, _ sealed: ReadOnlyJournal, rules: RulesFile, asOf: Int64
    ) throws {
        func explain(_ reader: ReadOnlyJournal, user: String?, id: String?) throws -> String? {
            guard let found = try UserHistory.read(reader, user: user, recordId: id) else { return nil }
            let explanation = Explanation(
                user: found.user, userRecords: found.records, sealedRecords: found.sealedRecords,
                rules: rules.rules, asOf: asOf)
            // As `explain --id` answers: a sealed record only when the explanation names it.
            if let id, found.foundBySealedRecord, !explanation.names(recordId: id) { return nil }
            return ExplanationFormat.json(explanation)
        }
        let users = try plain.connection.prepare("SELECT user FROM users ORDER BY user")
        var names: [String] = []
        while try users.step() { names.append(users.text(0) ?? "") }
        for user in names {
            #expect(try explain(sealed, user: user, id: nil) == explain(plain, user: user, id: nil), "explain \(user)")
        }
        let ids = try plain.connection.prepare("SELECT id FROM records ORDER BY id")
        while try ids.step() {
            let id = ids.text(0) ?? ""
            let expected = try explain(plain, user: nil, id: id)
            if let got = try explain(sealed, user: nil, id: id) {
                #expect(got == expected, "explain --id \(id)")
            } else {
                #expect(!(expected ?? "").contains("\"\(id)\""), "explain --id \(id): sealed but named")
            }
        }
    }
}
