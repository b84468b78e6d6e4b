import Fleet
import JournalStore
import NATS
import OfferTrackDomain
import Posix

/// `offertrack forward`: forwards an edge's journal to the stream again from a `seq` (SPEC section 10).
struct ForwardCommand {
    static let help = """
        Usage: offertrack forward --db EDGE.db --from-seq N --servers URL[,URL…] [--stream NAME]
                                  [--partitions-total P] [--stream-replicas N] [--stream-max-mb N]
                                  [--timeout SECONDS] [--rules PATH]

        Publishes every record of the edge journal from seq N on to the stream, as the edge daemon does
        (messages of one partition's records on offertrack.records.<partition>, their Nats-Msg-Id naming the
        journal and the records), and exits once the stream has acknowledged them all (exit 75 if that takes
        longer than --timeout, default 300). It is idempotent: the stream drops messages it holds and the
        central journals answer records they hold as duplicates. The edge's own watermark moves with it. Use it after restoring a stream or a central journal from a backup.
        --stream and --partitions-total default to those the edge journal records; others are refused (exit
        78), as is a stream that records another P. A stream that does not exist is created as the daemon
        creates it (--stream-replicas default 3, --stream-max-mb default as large as the cluster can place).

        Example:
          offertrack forward --db /var/lib/offertrack/offertrack.db --from-seq 1 --servers nats://10.0.0.5:4222
        """

    let databasePath: String
    let fromSeq: Int64
    let servers: [String]
    let streamName: String?
    let partitionsTotal: Int?
    let replicas: Int
    let maxMegabytes: Int?
    let timeoutSeconds: Int

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments,
            valued: [
                "--db", "--rules", "--from-seq", "--servers", "--stream", "--partitions-total", "--stream-replicas",
                "--stream-max-mb", "--timeout",
            ])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "forward takes no arguments") }
        databasePath = Paths.database(parsed.value("--db"), environment)
        guard let from = parsed.value("--from-seq").flatMap({ Int64($0) }), from >= 1 else {
            throw CLIError(.usage, "forward needs --from-seq N (a seq of at least 1)")
        }
        fromSeq = from
        let urls = (parsed.value("--servers") ?? "").split(separator: ",").map(String.init)
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("nats://") || $0.hasPrefix("tls://") }) else {
            throw CLIError(.usage, "forward needs --servers nats://HOST:PORT[,…]")
        }
        servers = urls
        streamName = parsed.value("--stream")
        partitionsTotal = try Self.number(parsed, "--partitions-total", max: 4096)
        replicas = try Self.number(parsed, "--stream-replicas", max: 5) ?? 3
        maxMegabytes = try Self.number(parsed, "--stream-max-mb", max: 1 << 30)
        guard let timeout = Int(parsed.value("--timeout") ?? "300"), timeout >= 1 else {
            throw CLIError(.usage, "--timeout must be a whole number of seconds")
        }
        timeoutSeconds = timeout
    }

    private static func number(_ parsed: CommandArguments, _ name: String, max: Int) throws(CLIError) -> Int? {
        guard let text = parsed.value(name) else { return nil }
        guard let number = Int(text), number >= 1, number <= max else {
            throw CLIError(.usage, "\(name) must be a whole number from 1 to \(max), not \(text)")
        }
        return number
    }

    /// The stream as the edge daemon has it: the journal's recorded stream and P, unless others are given
    /// (refused when they differ).
    private func stream() throws(CLIError) -> FleetStream {
        let recorded: FleetIdentity?
        do {
            recorded = try FleetIdentity.recorded(on: ReadOnlyJournal(path: databasePath, schema: .anyVersion))
        } catch {
            throw CLIError(journal: error, doing: "opening \(databasePath)")
        }
        let identity = FleetIdentity(
            stream: streamName ?? recorded?.stream ?? "OFFERTRACK",
            partitionsTotal: partitionsTotal ?? recorded?.partitionsTotal ?? 16)
        if let recorded, recorded != identity {
            throw CLIError(
                .configuration,
                "\(FleetIdentity.Mismatch(recorded: recorded, requested: identity)); leave out --stream and "
                    + "--partitions-total to use the journal's")
        }
        return FleetStream(
            name: identity.stream, partitionsTotal: identity.partitionsTotal, replicas: replicas,
            maxMegabytes: maxMegabytes)
    }

    func run() throws(CLIError) -> Int32 {
        guard CurrentProcess.fileSize(databasePath) != nil else {
            throw CLIError(.noInput, "no journal at \(databasePath)")
        }
        let stream = try stream()
        let forwarder: EdgeForwarder
        let last: Int64
        do {
            last = try ForwardingLog(path: databasePath).lastSeq()
            forwarder = try EdgeForwarder(
                journalPath: databasePath, servers: servers, stream: stream, name: "offertrack-forward",
                startingAfter: fromSeq - 1, log: { FileDescriptor.printError("offertrack forward: \($0)") })
        } catch let mismatch as FleetStream.Mismatch {
            throw CLIError(.configuration, "\(mismatch)")
        } catch {
            throw CLIError(.unavailable, "\(error)")
        }
        forwarder.start()
        let deadline = Clock.monotonicMilliseconds() + Int64(timeoutSeconds) * 1000
        while forwarder.progress.acknowledgedThrough < last {
            guard Clock.monotonicMilliseconds() < deadline else {
                forwarder.stop()
                throw CLIError(
                    .tryAgain,
                    "the stream acknowledged through seq \(forwarder.progress.acknowledgedThrough) of \(last) "
                        + "in \(timeoutSeconds) s; run it again from there"
                        + (forwarder.health.state.problem.map { " (\($0))" } ?? ""))
            }
            Sleep.milliseconds(20)
        }
        forwarder.stop()
        try Output.write("forwarded seq \(fromSeq) through \(last) (\(max(0, last - fromSeq + 1)) records)\n")
        return 0
    }
}
