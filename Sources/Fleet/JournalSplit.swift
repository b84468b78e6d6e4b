import AttributionJoin
import JournalStore
import OfferTrackDomain
import OutputFormats
import Posix
import PublishedLedger

/// Adding a central daemon (SPEC 10, `offertrack split`): some of a central journal's partitions, with everything of
/// their users, moved into a new journal that a new central daemon consumes them into from then on.
///
/// The new journal starts as a copy of the source (`JournalBackup`); then each journal keeps only its own users
/// (`UserRemoval`: records, index entries, what sealing kept and counted; derived tables rebuilt) and the published
/// export lines and rows in force of its own conversions (`PublishedSplit`: each published day's files rewritten
/// from them, so the fleet's export, which merges every journal's lines, writes every day as before). Both keep
/// the forgotten people's hashes, the payout months (every central journal stores the fleet's statements), the
/// sealing state and the meta. The sealed days' presentation counts cannot be divided by user: the source keeps
/// them, so the fleet's report, which adds the journals, is unchanged.
///
/// Offline: the source's daemon must be stopped (its lock is taken). Crash-safe: the new journal is built under a
/// temporary name, the source narrowed in one transaction, and only then is the new journal given its name; a run
/// that stopped midway is finished (or started over) by running it again.
public enum JournalSplit {
    /// Why a split was not made; nothing was changed.
    public struct Refusal: Error, CustomStringConvertible {
        public enum Kind: Sendable { case busy, notDividable, targetExists, usage }
        public let kind: Kind
        public let description: String
    }

    /// What a split did.
    public struct Outcome: Sendable, Equatable {
        /// Users that stayed in the source and users moved.
        public var keptUsers = 0
        public var movedUsers = 0
        /// Published export lines now stored by the new journal instead of the source.
        public var movedLines = 0
        /// The partitions each journal holds afterwards.
        public var sourcePartitions: [Int] = []
        public var targetPartitions: [Int] = []
        /// Only an earlier run's last step was left (giving the new journal its name).
        public var finishedEarlierRun = false
    }

    /// Moves partitions `moving` of the central journal at `source` into a new journal at `target`.
    public static func split(source: String, target: String, moving requested: [Int], log: Logger = .discard)
        throws -> Outcome
    {
        let lock: Int32
        do { lock = try FileLock.acquireExclusive(path: source + ".lock") } catch {
            throw Refusal(
                kind: .busy,
                description: "a daemon holds \(source) (\(error)): stop it first (systemctl stop offertrackd.socket "
                    + "offertrackd.service), then split")
        }
        defer { FileDescriptor.close(lock) }
        guard !FileSystem.exists(target) else {
            throw Refusal(kind: .targetExists, description: "\(target) exists; a split never replaces a file")
        }
        let partial = target + ".split"
        let writer = try JournalWriter(
            path: source,
            options: .init(
                durability: .full, schema: .migrate, busyTimeoutMilliseconds: 30_000, maintainsDerivedTables: false,
                migrationLog: log))
        defer { writer.close() }
        let membership = try writer.updatingMeta { try FleetMembership.read($0) }
        guard let membership else {
            throw Refusal(
                kind: .notDividable,
                description: "\(source) is not a central journal (it records no partitions): only a "
                    + "central journal is split")
        }
        let moving = Set(requested)
        let held = Set(membership.partitions)
        if let outside = moving.first(where: { $0 >= membership.total }) {
            throw Refusal(
                kind: .usage, description: "partition \(outside) is not one of the fleet's \(membership.total)")
        }
        if held.isDisjoint(with: moving), try finishedEarlier(partial: partial, moving: moving) {
            try give(partial, name: target)
            return Outcome(
                sourcePartitions: membership.partitions, targetPartitions: moving.sorted(), finishedEarlierRun: true)
        }
        guard moving.isSubset(of: held) else {
            throw Refusal(
                kind: .usage,
                description: "\(source) holds \(membership); it cannot give partitions "
                    + moving.subtracting(held).sorted().map(String.init).joined(separator: ","))
        }
        guard moving != held else {
            throw Refusal(
                kind: .usage, description: "\(source) would keep no partition: move its journal instead (docs/fleet.md)"
            )
        }
        let noted: [String: Int]
        do { noted = try JournalNarrowing.check(writer) } catch let undividable as JournalNarrowing.Undividable {
            throw Refusal(kind: .notDividable, description: "\(source): \(undividable.description)")
        }
        let total = membership.total
        let moves = { (user: String) in moving.contains(noted[user] ?? Partition.of(user: user, total: total)) }
        for suffix in ["", "-journal", "-wal", "-shm"] { FileSystem.remove(partial + suffix) }
        _ = try JournalBackup.copy(journal: source, to: partial)

        var outcome = Outcome(sourcePartitions: held.subtracting(moving).sorted(), targetPartitions: moving.sorted())
        // The new journal first, under its temporary name: its users, and the published lines of the conversions
        // they derive.
        let targetMembership = FleetMembership(partitions: outcome.targetPartitions, total: total)
        let moved = try {
            let copy = try JournalWriter(
                path: partial, options: .init(durability: .full, schema: .requireCurrent, maintainsDerivedTables: false)
            )
            defer { copy.close() }
            return try JournalNarrowing.narrow(
                copy, keepingUsers: moves, conversions: .derived, dropSealedCounts: true,
                render: render(day:lines:manifest:), meta: { try record(targetMembership, in: $0) })
        }()
        outcome.movedUsers = moved.keptUsers
        // Then the source, in one transaction: from its commit on the split is made, and a rerun only gives the new
        // journal its name.
        let sourceMembership = FleetMembership(partitions: outcome.sourcePartitions, total: total)
        let kept = try JournalNarrowing.narrow(
            writer, keepingUsers: { !moves($0) }, conversions: .allBut(moved.derivedConversions),
            dropSealedCounts: false, render: render(day:lines:manifest:),
            meta: { try record(sourceMembership, in: $0) })
        outcome.keptUsers = kept.keptUsers
        outcome.movedLines = kept.removedLines
        try give(partial, name: target)
        return outcome
    }

    /// The partitions a journal holds from now on; the consuming lag it last reported is its old self's.
    private static func record(_ membership: FleetMembership, in meta: JournalMeta) throws {
        try meta.set(FleetMembership.partitionsKey, to: membership.partitions.map(String.init).joined(separator: ","))
        try meta.remove(ConsumeLag.key)
    }

    /// Whether an earlier run left the new journal complete under its temporary name (it records `moving`).
    private static func finishedEarlier(partial: String, moving: Set<Int>) throws -> Bool {
        guard FileSystem.exists(partial) else { return false }
        let reader = try ReadOnlyJournal(path: partial)
        return try FleetMembership.recorded(on: reader).map { Set($0.partitions) == moving } ?? false
    }

    /// Gives the finished new journal its name (never replacing a file) and removes the temporary one. It is made
    /// one self-contained file first (its WAL checkpointed into it and removed, as `offertrack backup` leaves a
    /// copy), ready to be copied to the new central's host; its daemon turns WAL on again.
    private static func give(_ partial: String, name target: String) throws {
        try JournalBackup.makeSelfContained(partial)
        try FileSystem.linkWithoutReplacing(partial, as: target)
        FileSystem.remove(partial)
        FileSystem.syncDirectory(containing: partial)
    }

    /// A published day's files for the lines one journal keeps: the CSV of those lines, and the manifest with their
    /// count and sums, and the published manifest's currency, rules hash and time.
    static func render(day: String, lines: [ExportPlan.Line], manifest: [UInt8]) throws -> (
        csv: [UInt8], manifest: [UInt8]
    ) {
        let (commission, adjustment) = try ExportPlan.totals(of: lines)
        let published = PublishedManifest(manifest)
        let csv = ExportPlan.csv(of: lines)
        return (
            csv,
            ExportPlan.manifest(
                day: day, rows: lines.count, commissionMinor: commission, adjustmentMinor: adjustment, csv: csv,
                currency: published.currency ?? "", rulesSha256: published.rulesSha256 ?? "",
                generatedAt: published.generatedAt ?? "")
        )
    }
}
