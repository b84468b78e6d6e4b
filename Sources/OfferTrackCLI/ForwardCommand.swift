import Fleet
import Journal
import NATS
import OfferTrackDomain
import Posix

/// `offertrack forward`: forwards an edge's journal to the stream again from a `seq` (SPEC section 10).
struct ForwardCommand {
    static let help = """
        Usage: offertrack forward --db EDGE.db --from-seq N --servers URL[,URL…] [--stream NAME]
                                  [--partitions-total P] [--timeout SECONDS]

        Publishes every record of the edge journal from seq N on to the stream, as the edge daemon does
        (Nats-Msg-Id = record id, subject offertrack.records.<partition>), and exits once the stream has
        acknowledged them all (exit 75 if that takes longer than --timeout, default 300). It is idempotent:
        the stream and the central journals answer records they hold as duplicates. The edge's own watermark
        moves with it. Use it after restoring a stream or a central journal from a backup.

        Example:
          offertrack forward --db /var/lib/offertrack/offertrack.db --from-seq 1 --servers nats://10.0.0.5:4222
        """

    let databasePath: String
    let fromSeq: Int64
    let servers: [String]
    let stream: String
    let partitions: Int
    let timeoutSeconds: Int

    init(arguments: [String]) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments,
            valued: ["--db", "--rules", "--from-seq", "--servers", "--stream", "--partitions-total", "--timeout"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "forward takes no arguments") }
        databasePath = Paths.database(parsed.value("--db"))
        guard let from = parsed.value("--from-seq").flatMap({ Int64($0) }), from >= 1 else {
            throw CLIError(.usage, "forward needs --from-seq N (a seq of at least 1)")
        }
        fromSeq = from
        let urls = (parsed.value("--servers") ?? "").split(separator: ",").map(String.init)
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("nats://") || $0.hasPrefix("tls://") }) else {
            throw CLIError(.usage, "forward needs --servers nats://HOST:PORT[,…]")
        }
        servers = urls
        stream = parsed.value("--stream") ?? "OFFERTRACK"
        guard let total = Int(parsed.value("--partitions-total") ?? "16"), total >= 1, total <= 4096 else {
            throw CLIError(.usage, "--partitions-total must be from 1 to 4096")
        }
        partitions = total
        guard let timeout = Int(parsed.value("--timeout") ?? "300"), timeout >= 1 else {
            throw CLIError(.usage, "--timeout must be a whole number of seconds")
        }
        timeoutSeconds = timeout
    }

    func run() throws(CLIError) -> Int32 {
        guard CurrentProcess.fileSize(databasePath) != nil else {
            throw CLIError(.noInput, "no journal at \(databasePath)")
        }
        let forwarder: EdgeForwarder
        let last: Int64
        do {
            last = try ForwardingLog(path: databasePath).lastSeq()
            forwarder = try EdgeForwarder(
                journalPath: databasePath, servers: servers,
                stream: StreamConfiguration(
                    name: stream, subjects: ["offertrack.records.>"], replicas: 3, maxBytes: 10_240 << 20,
                    duplicatesWindowMilliseconds: 120_000),
                partitions: partitions, name: "offertrack-forward", startingAfter: fromSeq - 1)
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
                        + "in \(timeoutSeconds) s; run it again from there")
            }
            Sleep.milliseconds(20)
        }
        forwarder.stop()
        try Output.write("forwarded seq \(fromSeq) through \(last) (\(max(0, last - fromSeq + 1)) records)\n")
        return 0
    }
}
