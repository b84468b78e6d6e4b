import AttributionJoin
import JournalStore
import Posix

/// Which partitions of a fleet a central journal holds (SPEC section 10), recorded in `meta` when it first
/// consumes and checked at every start after.
public struct FleetMembership: Sendable, Equatable, CustomStringConvertible {
    /// The partitions consumed into this journal, ascending.
    public let partitions: [Int]
    /// P, the fleet's number of partitions.
    public let total: Int

    public init(partitions: [Int], total: Int) {
        self.partitions = Array(Set(partitions)).sorted()
        self.total = total
    }

    public var description: String { "partitions \(partitions.map(String.init).joined(separator: ",")) of \(total)" }

    static let partitionsKey = MetaKey<String>("fleet_partitions")
    static let totalKey = MetaKey<Int>("fleet_partitions_total")

    /// Why a journal refuses the partitions it was started with.
    public struct Mismatch: Error, CustomStringConvertible {
        public let recorded: FleetMembership
        public let requested: FleetMembership
        public var description: String {
            "this journal holds \(recorded) and was started with \(requested): every partition is consumed by "
                + "exactly one central journal, and P is fixed for the fleet's life"
        }
    }

    /// The membership recorded in the journal, if any.
    public static func recorded(on reader: ReadOnlyJournal) throws -> FleetMembership? {
        try read(reader.meta)
    }

    static func read(_ meta: JournalMeta) throws -> FleetMembership? {
        guard let list = try meta.value(partitionsKey), let total = try meta.value(totalKey)
        else { return nil }
        return FleetMembership(partitions: list.split(separator: ",").compactMap { Int($0) }, total: total)
    }
}

extension JournalWriter {
    /// Records `membership` on a journal that has none, or checks that it is the one recorded.
    public func claim(_ membership: FleetMembership) throws {
        try updatingMeta { meta in
            if let recorded = try FleetMembership.read(meta) {
                guard recorded == membership else {
                    throw FleetMembership.Mismatch(recorded: recorded, requested: membership)
                }
                return
            }
            try meta.setIfAbsent(
                FleetMembership.partitionsKey, to: membership.partitions.map(String.init).joined(separator: ","))
            try meta.setIfAbsent(FleetMembership.totalKey, to: membership.total)
        }
    }

    /// Records `identity` on a journal that has none (or only P, from before the stream's name was recorded), or
    /// checks that it is the one recorded: an edge's or a central's journal stays in the fleet it first joined.
    public func claim(_ identity: FleetIdentity) throws {
        try updatingMeta { meta in
            let recorded = try FleetIdentity.read(meta)
            if let total = recorded.total, total != identity.partitionsTotal {
                throw FleetIdentity.Mismatch(
                    recorded: FleetIdentity(stream: recorded.stream ?? identity.stream, partitionsTotal: total),
                    requested: identity)
            }
            if let stream = recorded.stream, stream != identity.stream {
                throw FleetIdentity.Mismatch(
                    recorded: FleetIdentity(
                        stream: stream, partitionsTotal: recorded.total ?? identity.partitionsTotal),
                    requested: identity)
            }
            try meta.setIfAbsent(FleetIdentity.streamKey, to: identity.stream)
            try meta.setIfAbsent(FleetMembership.totalKey, to: identity.partitionsTotal)
        }
    }
}

/// The fleet a journal belongs to (SPEC section 10): the stream's name and P, recorded in `meta` at an edge's
/// or a central daemon's first start and checked at every start after.
public struct FleetIdentity: Sendable, Equatable, CustomStringConvertible {
    public let stream: String
    public let partitionsTotal: Int

    public init(stream: String, partitionsTotal: Int) {
        self.stream = stream
        self.partitionsTotal = partitionsTotal
    }

    public var description: String { "stream \(stream) with --partitions-total \(partitionsTotal)" }

    static let streamKey = MetaKey<String>("fleet_stream")

    /// Why a journal refuses the stream or P it was started with.
    public struct Mismatch: Error, CustomStringConvertible {
        public let recorded: FleetIdentity
        public let requested: FleetIdentity
        public init(recorded: FleetIdentity, requested: FleetIdentity) {
            self.recorded = recorded
            self.requested = requested
        }
        public var description: String {
            "this journal belongs to the fleet of \(recorded) and was started with \(requested) (--stream, "
                + "--partitions-total): P and the stream are fixed for the fleet's life, and a journal that moved "
                + "would split its users' records and pay their conversions twice"
        }
    }

    /// The stream and P recorded in the journal (a stream of `OFFERTRACK` for a journal from before the stream's
    /// name was recorded), if it is an edge's or a central's.
    public static func recorded(on reader: ReadOnlyJournal) throws -> FleetIdentity? {
        let recorded = try read(reader.meta)
        return recorded.total.map { FleetIdentity(stream: recorded.stream ?? "OFFERTRACK", partitionsTotal: $0) }
    }

    static func read(_ meta: JournalMeta) throws -> (stream: String?, total: Int?) {
        (try meta.value(streamKey), try meta.value(FleetMembership.totalKey))
    }
}

/// Several journals read as one (`report`, `explain`, `verify`, `export` with `--db` more than once).
public enum FleetJournals {
    /// Why a set of journals cannot be read as one.
    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    /// Refuses a set that names one journal twice, repeats a partition or mixes P (SPEC 10: such a set would
    /// count records twice); returns each journal's partitions (nil for a journal that records none).
    @discardableResult
    public static func check(_ readers: [ReadOnlyJournal]) throws -> [FleetMembership?] {
        var files: [FileIdentity: String] = [:]
        var holder: [Int: String] = [:]
        var totals: [Int: String] = [:]
        var memberships: [FleetMembership?] = []
        for reader in readers {
            if let identity = CurrentProcess.fileIdentity(reader.path) {
                if let other = files[identity] {
                    throw Refusal(description: "\(reader.path) and \(other) are the same journal: give each once")
                }
                files[identity] = reader.path
            }
            let membership = try FleetMembership.recorded(on: reader)
            memberships.append(membership)
            guard let membership else { continue }
            if let (total, other) = totals.first, total != membership.total {
                throw Refusal(
                    description: "\(other) holds partitions of \(total) and \(reader.path) partitions of "
                        + "\(membership.total): the journals belong to fleets of different P")
            }
            totals[membership.total] = reader.path
            for partition in membership.partitions {
                if let other = holder[partition] {
                    throw Refusal(description: "partition \(partition) is in both \(other) and \(reader.path)")
                }
                holder[partition] = reader.path
            }
        }
        return memberships
    }
}

/// A central journal's consuming lag, as its daemon last recorded it (for `offertrack status`).
public struct ConsumeLag: Sendable, Equatable {
    /// Messages in the stream for this journal's partitions, not yet committed here.
    public let records: UInt64
    /// How old the newest consumed message was while messages were pending (seconds).
    public let seconds: Double
    /// When it was recorded (UTC epoch milliseconds).
    public let recordedAt: Int64

    public init(records: UInt64, seconds: Double, recordedAt: Int64) {
        self.records = records
        self.seconds = seconds
        self.recordedAt = recordedAt
    }

    static let key = MetaKey<ConsumeLag>("fleet_consume_lag")

    /// The lag last recorded in the journal, if it is a central one.
    public static func recorded(on reader: ReadOnlyJournal) throws -> ConsumeLag? {
        try reader.meta.value(key)
    }
}

extension ConsumeLag: MetaValue {
    /// The three numbers, space-separated.
    public init?(metaText text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 3, let records = UInt64(parts[0]), let seconds = Double(parts[1]),
            let at = Int64(parts[2])
        else { return nil }
        self.init(records: records, seconds: seconds, recordedAt: at)
    }

    /// How the lag is stored: the three numbers, space-separated.
    public var metaText: String { "\(records) \(seconds) \(recordedAt)" }
}

extension JournalWriter {
    /// Records the consuming lag and what the consumer reports (one small transaction on the writer's
    /// connection).
    public func record(_ lag: ConsumeLag, _ report: StreamReport) throws {
        try updatingMeta { meta in
            try meta.set(ConsumeLag.key, to: lag)
            try meta.set(StreamReport.key, to: report)
        }
    }
}

/// What a daemon last reported about the stream (for `offertrack status`): the problem that keeps it from
/// forwarding or consuming, if any, and the messages a central daemon refused.
public struct StreamReport: Sendable, Equatable {
    /// Why the stream cannot be used now, with what fixes it; nil while it works.
    public var problem: String?
    /// Stream messages that are not valid records (dropped).
    public var invalid: Int
    /// Ids journaled with other content (kept as journaled).
    public var conflicts: Int
    /// Records whose user's partition is not this journal's (never journaled).
    public var wrongPartition: Int
    /// Records whose `ts` is before the journal's acceptance horizon (SPEC 12: acknowledged, never journaled).
    public var expired: Int

    public init(problem: String?, invalid: Int = 0, conflicts: Int = 0, wrongPartition: Int = 0, expired: Int = 0) {
        self.problem = problem
        self.invalid = invalid
        self.conflicts = conflicts
        self.wrongPartition = wrongPartition
        self.expired = expired
    }

    static let key = MetaKey<StreamReport>("fleet_stream_report")

    /// The report last recorded in the journal, if its daemon is an edge or a central one.
    public static func recorded(on reader: ReadOnlyJournal) throws -> StreamReport? {
        try reader.meta.value(key)
    }
}

extension StreamReport: MetaValue {
    /// The counts (the third as `wrongPartition:expired`, or `wrongPartition` alone as before schema 16), then the
    /// problem's text.
    public init?(metaText text: String) {
        let parts = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let invalid = Int(parts[0]), let conflicts = Int(parts[1]) else { return nil }
        let third = parts[2].split(separator: ":", omittingEmptySubsequences: false)
        guard third.count <= 2, let wrong = Int(third[0]), let expired = third.count == 2 ? Int(third[1]) : 0
        else { return nil }
        self.init(
            problem: parts[3].isEmpty ? nil : String(parts[3]), invalid: invalid, conflicts: conflicts,
            wrongPartition: wrong, expired: expired)
    }

    /// How the report is stored: the counts, then the problem's text.
    public var metaText: String { "\(invalid) \(conflicts) \(wrongPartition):\(expired) \(problem ?? "")" }
}
