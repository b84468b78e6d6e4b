import JournalStore
import OfferTrackDomain
import Posix

/// Everything the daemon is told by its flags (`$STATE_DIRECTORY` only moves the default journal); what it takes
/// from the process environment is `DaemonEnvironment`.
public struct DaemonConfiguration: Sendable, Equatable {
    /// Where to bind when not socket-activated.
    public var socketPath = "./offertrack.sock"
    /// Whether `--socket` was given explicitly.
    public var socketPathGiven = false
    public var databasePath: String
    public var rulesPath: String?
    public var maxLineBytes = 65536
    public var maxConnections = 1024
    /// Seconds without progress (bytes read or written) after which a connection is closed.
    public var idleTimeoutSeconds = 300
    public var allowedUIDs: Set<UInt32> = []
    public var allowedGIDs: Set<UInt32> = []
    /// Peers allowed to send `review` records besides root and the daemon's own uid (SPEC 8).
    public var reviewerUIDs: Set<UInt32> = []
    public var reviewerGIDs: Set<UInt32> = []
    public var durability = Durability.full
    /// Seconds to finish the records already read after SIGTERM before answering the rest `shutting_down`.
    public var drainTimeoutSeconds = 5
    /// Journal records without keeping attribution's derived tables current (bulk back-fills); the tables are
    /// marked stale, so reports recompute until `offertrack rebuild` or the next normal start.
    public var journalOnly = false
    /// Where to serve `GET /metrics`; nil (the default): no metrics endpoint.
    public var metricsAddress: MetricsAddress?
    /// Edge mode (SPEC section 10): the NATS servers to forward every accepted record to; empty: not an edge.
    public var forwardServers: [String] = []
    /// Central mode (SPEC section 10): the NATS servers to consume partitions from; empty: not a central daemon.
    public var consumeServers: [String] = []
    /// The partitions a central daemon consumes.
    public var partitions: [Int] = []
    /// The most records one commit of records from the stream holds (a central daemon); a message with more is
    /// split over several commits. The default is a socket batch's limit (`CommitQueue.Limits.maxBatch`).
    public var consumeBatch = 2048
    /// The JetStream stream's name.
    public var streamName = "OFFERTRACK"
    /// P, the fleet's number of partitions.
    public var partitionsTotal = 16
    /// Replicas of the stream an edge creates when it is absent.
    public var streamReplicas = 3
    /// Size limit of that stream in MiB (it refuses new records when full: `Discard=New`); nil: as large as the
    /// cluster can place, up to 10 GiB.
    public var streamMaxMegabytes: Int?

    /// The defaults: `./offertrack.db`, or `$STATE_DIRECTORY/offertrack.db` under systemd.
    public init(stateDirectory: String? = nil) {
        databasePath = Self.defaultDatabasePath(stateDirectory: stateDirectory)
    }

    /// `$STATE_DIRECTORY/offertrack.db` when the variable is set (its first entry), else `./offertrack.db`.
    public static func defaultDatabasePath(stateDirectory: String?) -> String {
        JournalLocation.defaultPath(stateDirectory: stateDirectory)
    }
}

#if OFFERTRACK_FAULT_HOOKS
    extension DaemonConfiguration {
        /// FOR TESTS ONLY, in debug builds: `synchronous=OFF` (see `Durability.unsafeOffForTests`).
        public mutating func disableSyncForTestsOnly() { durability = .unsafeOffForTests }
    }
#endif

/// A command-line problem, reported with usage and exit code 64.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What the command line asks for.
public enum DaemonCommand: Sendable, Equatable {
    case run(DaemonConfiguration)
    case help
    case version
}

extension DaemonConfiguration {
    /// Parses the daemon's arguments (without the program name). Accepts `--flag value` and `--flag=value`.
    public static func parse(_ arguments: [String], stateDirectory: String?) throws(UsageError) -> DaemonCommand {
        var configuration = DaemonConfiguration(stateDirectory: stateDirectory)
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws(UsageError) -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw UsageError("\(name) needs a value") }
                return next
            }
            switch name {
            case "--help", "-h": return .help
            case "--version": return .version
            case "--socket":
                configuration.socketPath = try value()
                configuration.socketPathGiven = true
            case "--db": configuration.databasePath = try value()
            case "--rules": configuration.rulesPath = try value()
            case "--max-line-bytes":
                configuration.maxLineBytes = try positive(name, try value(), max: 64 << 20)
            case "--max-connections":
                configuration.maxConnections = try positive(name, try value(), max: 1 << 20)
            case "--idle-timeout":
                configuration.idleTimeoutSeconds = try positive(name, try value(), max: 86400 * 365)
            case "--drain-timeout":
                configuration.drainTimeoutSeconds = try positive(name, try value(), max: 3600)
            case "--allow-uid":
                configuration.allowedUIDs.insert(try identity(name, try value(), lookup: UserDatabase.uid(named:)))
            case "--allow-gid":
                configuration.allowedGIDs.insert(try identity(name, try value(), lookup: UserDatabase.gid(named:)))
            case "--allow-review-uid":
                configuration.reviewerUIDs.insert(try identity(name, try value(), lookup: UserDatabase.uid(named:)))
            case "--allow-review-gid":
                configuration.reviewerGIDs.insert(try identity(name, try value(), lookup: UserDatabase.gid(named:)))
            case "--journal-only": configuration.journalOnly = true
            case "--forward":
                configuration.forwardServers = try servers(name, try value())
            case "--consume":
                configuration.consumeServers = try servers(name, try value())
            case "--partitions":
                configuration.partitions = try partitionList(try value())
            case "--consume-batch":
                configuration.consumeBatch = try positive(name, try value(), max: 1 << 20)
            case "--stream":
                let text = try value()
                guard !text.isEmpty,
                    text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x2E && $0 != 0x2A && $0 != 0x3E })
                else { throw UsageError("--stream must be a stream name without spaces, '.', '*' or '>', not \(text)") }
                configuration.streamName = text
            case "--partitions-total":
                configuration.partitionsTotal = try positive(name, try value(), max: 4096)
            case "--stream-replicas":
                configuration.streamReplicas = try positive(name, try value(), max: 5)
            case "--stream-max-mb":
                configuration.streamMaxMegabytes = try positive(name, try value(), max: 1 << 30)
            case "--metrics-listen":
                let text = try value()
                guard let address = MetricsAddress(text) else {
                    throw UsageError("--metrics-listen takes HOST:PORT or an absolute socket path, not \(text)")
                }
                configuration.metricsAddress = address
            case "--durability":
                let text = try value()
                guard let durability = Durability.operatorChoices.first(where: { $0.rawValue == text }) else {
                    throw UsageError("--durability must be full or normal, not \(text)")
                }
                configuration.durability = durability
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
        // An edge keeps no attribution: its users' other records are on other edges.
        if !configuration.forwardServers.isEmpty { configuration.journalOnly = true }
        if !configuration.forwardServers.isEmpty && !configuration.consumeServers.isEmpty {
            throw UsageError("--forward and --consume exclude each other: a daemon is an edge or a central one")
        }
        if configuration.consumeServers.isEmpty != configuration.partitions.isEmpty {
            throw UsageError("--consume and --partitions go together")
        }
        if let outside = configuration.partitions.first(where: { $0 >= configuration.partitionsTotal }) {
            throw UsageError(
                "--partitions: \(outside) is not below --partitions-total \(configuration.partitionsTotal)")
        }
        return .run(configuration)
    }

    /// `0-7`, `0,2,4` or a mix (`0-3,8`): partitions, each at most once.
    private static func partitionList(_ text: String) throws(UsageError) -> [Int] {
        do { return try Partition.list(text) } catch .malformed {
            throw UsageError("--partitions takes a list like 0-7 or 0,2,4, not \(text)")
        } catch {
            throw UsageError("--partitions names a partition twice: \(text)")
        }
    }

    /// `URL[,URL…]` of NATS servers (`nats://host:port`).
    private static func servers(_ name: String, _ text: String) throws(UsageError) -> [String] {
        let urls = text.split(separator: ",").map(String.init)
        guard !urls.isEmpty, urls.allSatisfy({ $0.hasPrefix("nats://") || $0.hasPrefix("tls://") }) else {
            throw UsageError("\(name) takes nats://HOST:PORT[,nats://HOST:PORT…], not \(text)")
        }
        return urls
    }

    private static func positive(_ name: String, _ text: String, max: Int) throws(UsageError) -> Int {
        guard let number = Int(text), number > 0, number <= max else {
            throw UsageError("\(name) must be a whole number from 1 to \(max), not \(text)")
        }
        return number
    }

    private static func identity(_ name: String, _ text: String, lookup: (String) -> UInt32?) throws(UsageError)
        -> UInt32
    {
        if let number = UInt32(text) { return number }
        guard let found = lookup(text) else { throw UsageError("\(name): no such user or group \(text)") }
        return found
    }

    /// The `--help` text.
    public static let usage = """
        Usage: offertrackd [options]

        Receives NDJSON records on a Unix socket, journals them durably to SQLite and acknowledges each
        after its commit. Under systemd the socket comes from socket activation.

        Options:
          --socket PATH           socket to bind when not socket-activated (default ./offertrack.sock)
          --db PATH               journal database (default $STATE_DIRECTORY/offertrack.db, else ./offertrack.db)
          --rules PATH            commission rules file, re-read on SIGHUP (offertrack-rules(5))
          --max-line-bytes N      longest accepted line in bytes (default 65536)
          --max-connections N     connections served at once; more wait in the backlog (default 1024)
          --idle-timeout SECONDS  close a connection without progress this long (default 300)
          --allow-uid UID|NAME    also serve this uid (repeatable; root and the daemon's uid always)
          --allow-gid GID|NAME    also serve peers in this group, primary or supplementary (repeatable)
          --allow-review-uid UID|NAME  also accept review and erasure records from this uid (repeatable; root
                                  and the daemon's uid always; such a peer may connect without --allow-uid)
          --allow-review-gid GID|NAME  also accept review and erasure records from peers in this group
                                  (repeatable)
          --durability full|normal  synchronous=FULL (default, survives power loss) or NORMAL
          --drain-timeout SECONDS time to finish read records after SIGTERM (default 5)
          --journal-only          do not keep attribution current (bulk back-fills; reports recompute
                                  until `offertrack rebuild` or the next normal start)
          --forward URL[,URL…]    edge mode: forward every accepted record to NATS JetStream (SPEC 10); keeps
                                  no attribution (as --journal-only)
          --consume URL[,URL…]    central mode: consume --partitions of the stream into this journal (SPEC 10)
          --partitions LIST       the partitions a central daemon consumes (0-7, 0,2,4); fixed for its journal
          --consume-batch N       the most records one commit from the stream holds (default 2048)
          --stream NAME           the JetStream stream (default OFFERTRACK)
          --partitions-total P    the fleet's partitions (default 16)
          --stream-replicas N     replicas of the stream when a daemon creates it (default 3)
          --stream-max-mb N       its size limit; a full stream refuses new records (default: as large as the
                                  cluster can place, up to 10240)
          --metrics-listen ADDR   serve Prometheus metrics (GET /metrics) on HOST:PORT or a Unix socket path
                                  (off by default; 127.0.0.1:9464 for a local scraper)
          --help (-h), --version

        Example:
          offertrackd --socket /tmp/ot.sock --db /tmp/ot.db --allow-gid offertrack-writers
        """
}
