import OfferTrackDomain
import OutputFormats
import PublishedLedger
import WireFormat

/// Publishes payout months (SPEC 7.1) inside the journal (stored through `PayoutMonthStore`), from the published export days' files as stored at
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
        /// Money is never published from a rules file nobody gave (SPEC 6): only a published month is rewritten
        /// without.
        case rulesRequired(month: PayoutMonth)

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
            case .rulesRequired(let month):
                "--rules is required: \(month) is not published, and money is never published from rules nobody gave"
            }
        }
    }

    /// Publishes `month` from the journals at `journalPaths` (one, or every central journal of a fleet): the stored
    /// files when it is published, else the statement computed now with `rules`' payout minimum. Which sets of
    /// journals make a whole is the fleet's to say: the caller checks them first (`FleetExport` in `Fleet`). Without
    /// `rules` only a month published before is written (`Refusal.rulesRequired` otherwise).
    public static func publish(
        journalPaths: [String], month: PayoutMonth, rules: RulesFile?, now: Int64,
        busyTimeoutMilliseconds: Int32 = 30_000
    ) throws -> Files {
        let stores = try journalPaths.map {
            try PayoutMonthStore(journalPath: $0, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        }
        let states = try stores.map { try $0.state(of: month) }
        let stored = try agreedFiles(states)
        let files: Files
        if let stored {
            files = stored
        } else {
            guard let rules else { throw Refusal.rulesRequired(month: month) }
            let statement = try statement(month, states: states, stores: stores, minimum: rules.rules)
            let csv = statement.csv()
            files = Files(csv: csv, manifest: statement.manifest(csv: csv, generatedAt: now), republished: false)
        }
        // Stored in every journal that lacks it; a concurrent run that stored it first wins.
        var answer = files
        for (index, store) in stores.enumerated() {
            let held = try store.store(csv: answer.csv, manifest: answer.manifest, month: month, generatedAt: now)
            let kept = Files(csv: held.csv, manifest: held.manifest, republished: held.stored)
            if kept.csv != answer.csv || kept.manifest != answer.manifest {
                guard index == 0 else { throw Refusal.journalsDisagree("the published files of \(month)") }
                answer = kept
            } else if kept.republished {
                answer = kept
            }
        }
        return answer
    }

    /// The month's files as already published in the journals that hold it (all the same), or nil when none does.
    private static func agreedFiles(_ states: [PayoutMonthStore.State]) throws -> Files? {
        let stored = states.compactMap { state in
            state.month.map { Files(csv: $0.csv, manifest: $0.manifest, republished: true) }
        }
        guard let first = stored.first else { return nil }
        guard stored.allSatisfy({ $0 == first }) else {
            throw Refusal.journalsDisagree("the published files of the month")
        }
        return first
    }

    /// The statement of `month`, after checking that it may be published (SPEC 7.1).
    private static func statement(
        _ month: PayoutMonth, states: [PayoutMonthStore.State], stores: [PayoutMonthStore],
        minimum rules: CommissionRules
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
        for store in stores {
            // Every row of the month's published export files, one day's file at a time.
            try store.forEachExportCSV(of: month) { day, csv in
                try earnings.add(exportCSV: csv, name: "commissions-\(day).csv")
            }
        }
        return try PayoutStatement(
            month: month, earnings: earnings, opening: opening, minimumMinor: rules.payoutMinimumMinor)
    }
}
