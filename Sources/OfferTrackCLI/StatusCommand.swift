import Fleet
import JSON
import JournalStore
import OfferTrackDomain
import Posix
import PublishedLedger

/// `offertrack status`: is the daemon up, the journal's size, record counts, last seq, last export.
struct StatusCommand {
    static let help = """
        Usage: offertrack status [--db PATH] [--socket PATH] [--format text|json] [--rules PATH]

        Prints whether offertrackd accepts connections on its socket, the journal's size on disk, how many
        records of each type it holds, the last seq, the first and last published export days and the last
        published payout month, and today's busiest users (the most records received since UTC midnight, among
        the latest 200,000 records: a placeholder id to add to sharedUsers, a test device). --format json prints
        one object for scripts and monitoring: {"daemon":"up|down", "socket","journal","journalBytes",
        "schemaVersion","records":{"capabilities","offer.presented","subscription.outcome","review","erasure"},
        "lastSeq","lastPublishedExport","firstPublishedExport","lastPublishedPayouts","consume","forward","stream",
        "lastSealedDay","acceptanceHorizon","busiestUsersToday":{"users":[{"user","records"}],"partial"}} (the
        published ones null when nothing was published; lastSealedDay (YYYY-MM-DD) and acceptanceHorizon (RFC 3339,
        before it records are refused expired) null before the first `offertrack seal`;
        consume null unless the journal is a central one: {"partitions","partitionsTotal","lagRecords",
        "lagSeconds"}; forward null unless it is an edge's: {"acknowledgedThrough","lagRecords","lagSeconds"};
        stream null unless it is either: {"name","partitionsTotal","up","problem","invalid","conflicts",
        "wrongPartition","expired"}, problem being what keeps its daemon from forwarding or consuming, with the fix, as the
        daemon last recorded it, and the counts the messages a central daemon refused since it started).
        --db may be given more than once (a fleet's central journals): one block per journal (a JSON array).
        Exit: 0 when the daemon is up, 69 when it is not (the rest is still printed), 66 when a journal does
        not exist.

        Example:
          offertrack status --db /var/lib/offertrack/offertrack.db --socket /run/offertrack.sock
          offertrack status --format json
        """

    let databasePaths: [String]
    let socketPath: String
    let json: Bool

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--socket", "--rules", "--format"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "status takes no arguments") }
        let given = parsed.values("--db")
        databasePaths = given.isEmpty ? [Paths.database(nil, environment)] : given
        socketPath = Paths.socket(parsed.value("--socket"), environment)
        let format = parsed.value("--format") ?? "text"
        guard format == "text" || format == "json" else {
            throw CLIError(.usage, "--format must be text or json, not \(format)")
        }
        json = format == "json"
    }

    func run() throws(CLIError) -> Int32 {
        let daemonUp: Bool
        if let fd = try? UnixSocket.connect(path: socketPath) {
            FileDescriptor.close(fd)
            daemonUp = true
        } else {
            daemonUp = false
        }
        let parts = try databasePaths.map { path throws(CLIError) in try describe(path, daemonUp: daemonUp) }
        // Several journals (a fleet's central ones): one block each, or a JSON array.
        let text =
            json && parts.count > 1
            ? "[" + parts.map { $0.dropLast() }.joined(separator: ",\n") + "]\n" : parts.joined()
        try Output.write(text)
        return daemonUp ? 0 : ExitCode.unavailable.rawValue
    }

    /// One journal's status, in the chosen format, ending in a newline.
    private func describe(_ databasePath: String, daemonUp: Bool) throws(CLIError) -> String {
        let reader: ReadOnlyJournal
        do { reader = try ReadOnlyJournal(path: databasePath, schema: .anyVersion) } catch {
            throw CLIError(journal: error, doing: "opening \(databasePath)")
        }
        let size = ["", "-wal"].compactMap { CurrentProcess.fileSize(databasePath + $0) }.reduce(0, +)
        let counts: [RecordType: Int64]
        let lastSeq: Int64
        let lastDay: String?
        let firstDay: String?
        let lastMonth: String?
        let schema: Int64
        let forwarding: (through: Int64, records: Int64, seconds: Double)?
        let membership: FleetMembership?
        let consumeLag: ConsumeLag?
        let identity: FleetIdentity?
        let streamReport: StreamReport?
        let busiest: (users: [(user: String, records: Int64)], partial: Bool)
        let sealed: SealState?
        do {
            sealed = try reader.sealState()
            identity = try FleetIdentity.recorded(on: reader)
            streamReport = try StreamReport.recorded(on: reader)
            membership = try FleetMembership.recorded(on: reader)
            consumeLag = try ConsumeLag.recorded(on: reader)
            forwarding = try ForwardingLog.lag(of: reader, now: Clock.wallMilliseconds())
            counts = try reader.countsByType()
            lastSeq = try reader.lastSeq()
            lastDay = try reader.lastPublishedDay()
            firstDay = try reader.firstPublishedDay()
            lastMonth = try reader.lastPublishedMonth()
            schema = try reader.schemaVersion()
            let now = Clock.wallMilliseconds()
            busiest = try reader.busiestUsers(since: now - now % Timestamp.millisecondsPerDay)
        } catch {
            throw CLIError(.ioError, "reading \(databasePath): \(error)")
        }
        var text: String
        if json {
            let records = RecordType.allCases.map { (key: $0.rawValue, value: JSONValue.integer(counts[$0] ?? 0)) }
            let consume = membership.map { membership in
                JSONValue.object([
                    "partitions": .array(membership.partitions.map { .integer($0) }),
                    "partitionsTotal": .integer(membership.total), "lagRecords": .integer(consumeLag?.records ?? 0),
                    "lagSeconds": .double(consumeLag?.seconds ?? 0),
                ])
            }
            let forward = forwarding.map { forwarding in
                JSONValue.object([
                    "acknowledgedThrough": .integer(forwarding.through), "lagRecords": .integer(forwarding.records),
                    "lagSeconds": .double(forwarding.seconds),
                ])
            }
            let users = busiest.users.map {
                JSONValue.object(["user": .string($0.user), "records": .integer($0.records)])
            }
            let status = JSONValue.object([
                "daemon": .string(daemonUp ? "up" : "down"), "socket": .string(socketPath),
                "journal": .string(databasePath), "journalBytes": .integer(size), "schemaVersion": .integer(schema),
                "records": .object(records), "lastSeq": .integer(lastSeq), "lastPublishedExport": .string(lastDay),
                "firstPublishedExport": .string(firstDay), "lastPublishedPayouts": .string(lastMonth),
                "lastSealedDay": .string(sealed.map { Self.day($0.lastSealedDay) }),
                "acceptanceHorizon": .string(sealed.map { Timestamp.format($0.horizon) }),
                "consume": consume ?? .null, "forward": forward ?? .null,
                "stream": identity.map { Self.streamJSON($0, streamReport) } ?? .null,
                "busiestUsersToday": .object(["users": .array(users), "partial": .bool(busiest.partial)]),
            ])
            text = JSONWriter.text(status) + "\n"
        } else {
            text = "daemon: \(daemonUp ? "up" : "down") (\(socketPath))\n"
            text += "journal: \(databasePath), \(size) bytes\n"
            for type in RecordType.allCases { text += "records \(type.rawValue): \(counts[type] ?? 0)\n" }
            text += "last seq: \(lastSeq)\n"
            text += "last published export: \(lastDay ?? "none")\n"
            text += "first published export: \(firstDay ?? "none")\n"
            text += "last published payouts: \(lastMonth ?? "none")\n"
            text += "last sealed day: \(sealed.map { Self.day($0.lastSealedDay) } ?? "none")\n"
            text += "acceptance horizon: \(sealed.map { Timestamp.format($0.horizon) } ?? "none")\n"
            let users = busiest.users.map { "\($0.user) (\($0.records))" }.joined(separator: ", ")
            text +=
                "busiest users today (UTC, by records received\(busiest.partial ? ", among the latest 200000" : "")): "
                + (users.isEmpty ? "none" : users) + "\n"
            if let membership {
                text +=
                    "consumes \(membership); lag \(consumeLag?.records ?? 0) records, \(consumeLag?.seconds ?? 0) s\n"
            }
            if let forwarding {
                text +=
                    "forwarded through seq \(forwarding.through): lag \(forwarding.records) records, "
                    + "\(forwarding.seconds) s\n"
            }
            if let identity {
                text += "\(identity): \(streamReport?.problem.map { "DOWN: \($0)" } ?? "up")\n"
            }
            if let streamReport, membership != nil {
                text +=
                    "refused from the stream since start: \(streamReport.invalid) invalid, \(streamReport.conflicts) "
                    + "conflicting ids, \(streamReport.wrongPartition) of other partitions, \(streamReport.expired) "
                    + "before the acceptance horizon\n"
            }
        }
        return text
    }

    private static func streamJSON(_ identity: FleetIdentity, _ report: StreamReport?) -> JSONValue {
        .object([
            "name": .string(identity.stream), "partitionsTotal": .integer(identity.partitionsTotal),
            "up": .bool(report?.problem == nil), "problem": .string(report?.problem),
            "invalid": .integer(report?.invalid ?? 0), "conflicts": .integer(report?.conflicts ?? 0),
            "wrongPartition": .integer(report?.wrongPartition ?? 0), "expired": .integer(report?.expired ?? 0),
        ])
    }

    private static func day(_ number: Int64) -> String {
        Timestamp.formatDay(number * Timestamp.millisecondsPerDay)
    }
}
