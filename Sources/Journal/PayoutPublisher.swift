import OfferTrackDomain
import OfferTrackPresentation
import SQLite
import WireFormat

/// Publishes payout months (SPEC 7.1) inside the journal, from the published export days' files as stored at
/// their publication, so that a statement always adds up to what was exported and a published month is immutable.
///
/// With several journals (a fleet's central ones, SPEC 10) the statement is one for the whole, from the union of
/// their published days' rows, and is stored in each of them; a run that stopped after storing it in some of them
/// is completed by the next from the bytes already stored.
public enum PayoutPublisher {
    /// The files of one published month.
    public struct Files: Sendable, Equatable {
        public let csv: [UInt8]
        public let manifest: [UInt8]
        /// True when the month was published before: these are the bytes first published.
        public let republished: Bool
    }

    /// Why a month cannot be published.
    public enum Refusal: Error, Equatable, CustomStringConvertible {
        case nothingPublished(month: PayoutMonth)
        case beforeFirstMonth(month: PayoutMonth, first: PayoutMonth)
        case lastDayMissing(month: PayoutMonth, firstMissingDay: String)
        case previousMonthMissing(month: PayoutMonth, firstMissingMonth: PayoutMonth)
        case journalsDisagree(String)

        public var description: String {
            switch self {
            case .nothingPublished(let month):
                "\(month) needs its export days published through \(month.lastDay), and no export day is "
                    + "published yet: export \(month.lastDay) first"
            case .beforeFirstMonth(let month, let first):
                "\(month) is before \(first), the month of the first published export day: it is never published"
            case .lastDayMissing(let month, let day):
                "\(month) needs its export days published through \(month.lastDay): export \(day) first "
                    + "(the first day not published)"
            case .previousMonthMissing(let month, let missing):
                "\(month) opens with the balances the month before carries: publish the payouts of \(missing) "
                    + "first (the first month not published)"
            case .journalsDisagree(let what): "the journals disagree on \(what)"
            }
        }
    }

    /// Publishes `month` from the journals at `journalPaths` (one, or every central journal of a fleet): the stored
    /// files when it is published, else the statement computed now with `rules`' payout minimum. Which sets of
    /// journals make a whole is the fleet's to say: the caller checks them first (`FleetExport` in `Fleet`).
    public static func publish(
        journalPaths: [String], month: PayoutMonth, rules: RulesFile, now: Int64,
        busyTimeoutMilliseconds: Int32 = 30_000
    ) throws -> Files {
        let writers = try journalPaths.map {
            try JournalWriter(
                path: $0, durability: .full, busyTimeoutMilliseconds: busyTimeoutMilliseconds,
                maintainsDerivedTables: false)
        }
        let states = try writers.map { writer in
            try writer.withConnection { connection in
                try connection.readTransaction { try PublishedState.read(month, on: connection) }
            }
        }
        let stored = try agreedFiles(states)
        let files: Files
        if let stored {
            files = stored
        } else {
            let statement = try statement(month, states: states, writers: writers, minimum: rules.rules)
            let csv = statement.csv()
            files = Files(csv: csv, manifest: statement.manifest(csv: csv, generatedAt: now), republished: false)
        }
        // Stored in every journal that lacks it; a concurrent run that stored it first wins.
        var answer = files
        for (index, writer) in writers.enumerated() {
            let kept = try writer.withConnection { connection in
                try connection.transaction { try store(answer, month: month, generatedAt: now, on: connection) }
            }
            if kept.csv != answer.csv || kept.manifest != answer.manifest {
                guard index == 0 else { throw Refusal.journalsDisagree("the published files of \(month)") }
                answer = kept
            } else if kept.republished {
                answer = kept
            }
        }
        return answer
    }

    /// What one journal holds that publishing a month depends on.
    private struct PublishedState {
        var month: Files?
        var firstDay: String?
        var lastDay: String?
        var monthDays: [String]
        var latestMonth: String?
        var previous: [UInt8]?

        static func read(_ month: PayoutMonth, on connection: Connection) throws -> PublishedState {
            let days = try connection.allTexts("SELECT day FROM published_days ORDER BY day")
            var state = PublishedState(
                month: nil, firstDay: days.first, lastDay: days.last,
                monthDays: days.filter { month.contains(day: $0) }, latestMonth: nil, previous: nil)
            state.latestMonth = try connection.allTexts("SELECT max(month) FROM published_months").first
            if state.latestMonth?.isEmpty == true { state.latestMonth = nil }
            if let stored = try files(of: month.description, on: connection) {
                state.month = Files(csv: stored.csv, manifest: stored.manifest, republished: true)
            }
            state.previous = try month.previous.flatMap { try files(of: $0.description, on: connection)?.csv }
            return state
        }

        static func files(of month: String, on connection: Connection) throws -> (csv: [UInt8], manifest: [UInt8])? {
            let statement = try connection.prepare("SELECT csv, manifest FROM published_months WHERE month = ?1")
            try statement.bind(month, at: 1)
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (statement.bytes(0), statement.bytes(1))
        }
    }

    /// The month's files as already published in the journals that hold it (all the same), or nil when none does.
    private static func agreedFiles(_ states: [PublishedState]) throws -> Files? {
        let stored = states.compactMap(\.month)
        guard let first = stored.first else { return nil }
        guard stored.allSatisfy({ $0 == first }) else {
            throw Refusal.journalsDisagree("the published files of the month")
        }
        return first
    }

    /// The statement of `month`, after checking that it may be published (SPEC 7.1).
    private static func statement(
        _ month: PayoutMonth, states: [PublishedState], writers: [JournalWriter], minimum rules: CommissionRules
    ) throws -> PayoutStatement {
        guard let state = states.first else { throw Refusal.nothingPublished(month: month) }
        for other in states.dropFirst() {
            guard other.firstDay == state.firstDay, other.monthDays == state.monthDays else {
                throw Refusal.journalsDisagree(
                    "the published export days (latest: \(states.map { $0.lastDay ?? "none" }.joined(separator: ", ")))"
                )
            }
            guard other.latestMonth == state.latestMonth, other.previous == state.previous else {
                throw Refusal.journalsDisagree("the published payout months")
            }
        }
        guard let firstDay = state.firstDay, let firstMonth = PayoutMonth(containingDay: firstDay),
            let lastDay = state.lastDay
        else { throw Refusal.nothingPublished(month: month) }
        if month < firstMonth { throw Refusal.beforeFirstMonth(month: month, first: firstMonth) }
        guard state.monthDays.last == month.lastDay else {
            let next = Timestamp.parseDay(lastDay).map { Timestamp.formatDay($0 + Timestamp.millisecondsPerDay) }
            throw Refusal.lastDayMissing(month: month, firstMissingDay: next ?? month.lastDay)
        }
        var opening: [PayoutPair: Int64] = [:]
        if month != firstMonth {
            guard let previous = state.previous, let previousMonth = month.previous else {
                let missing = state.latestMonth.flatMap { PayoutMonth($0) }?.next ?? firstMonth
                throw Refusal.previousMonthMissing(month: month, firstMissingMonth: missing)
            }
            opening = try PayoutStatement.carried(fromCSV: previous, name: "payouts-\(previousMonth).csv")
        }
        var earnings = PayoutEarnings()
        for writer in writers {
            try writer.withConnection { connection in
                try connection.readTransaction { try add(month, on: connection, to: &earnings) }
            }
        }
        return try PayoutStatement(
            month: month, earnings: earnings, opening: opening, minimumMinor: rules.payoutMinimumMinor)
    }

    /// Adds every row of the month's published export files, one day's file at a time.
    private static func add(_ month: PayoutMonth, on connection: Connection, to earnings: inout PayoutEarnings) throws {
        try PublishedDays.forEachCSV(from: month.firstDay, through: month.lastDay, on: connection) { day, csv in
            try earnings.add(exportCSV: csv, name: "commissions-\(day).csv")
        }
    }

    /// Stores `files` as `month`'s unless the journal already holds the month: returns the files it holds now.
    private static func store(_ files: Files, month: PayoutMonth, generatedAt: Int64, on connection: Connection) throws
        -> Files
    {
        if let stored = try PublishedState.files(of: month.description, on: connection) {
            return Files(csv: stored.csv, manifest: stored.manifest, republished: true)
        }
        let insert = try connection.prepare(
            "INSERT INTO published_months (month, generated_at, csv, manifest) VALUES (?1, ?2, ?3, ?4)")
        try insert.bind(month.description, at: 1)
        try insert.bind(generatedAt, at: 2)
        try insert.bindText(files.csv, at: 3)
        try insert.bindText(files.manifest, at: 4)
        try insert.run()
        return files
    }
}
