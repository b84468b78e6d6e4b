import Journal
import OfferTrackDomain
import Posix

/// Everything the daemon is told by its flags and environment.
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
    public var durability = Durability.full
    /// Seconds to finish the records already read after SIGTERM before answering the rest `shutting_down`.
    public var drainTimeoutSeconds = 5
    /// Journal records without keeping attribution's derived tables current (bulk back-fills); the tables are
    /// marked stale, so reports recompute until `offertrack rebuild` or the next normal start.
    public var journalOnly = false

    /// The defaults: `./offertrack.db`, or `$STATE_DIRECTORY/offertrack.db` under systemd.
    public init(stateDirectory: String? = nil) {
        databasePath = Self.defaultDatabasePath(stateDirectory: stateDirectory)
    }

    /// `$STATE_DIRECTORY/offertrack.db` when the variable is set (its first entry), else `./offertrack.db`.
    public static func defaultDatabasePath(stateDirectory: String?) -> String {
        JournalLocation.defaultPath(stateDirectory: stateDirectory)
    }
}

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
            case "--journal-only": configuration.journalOnly = true
            case "--durability":
                let text = try value()
                guard let durability = Durability(rawValue: text) else {
                    throw UsageError("--durability must be full or normal, not \(text)")
                }
                configuration.durability = durability
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
        return .run(configuration)
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
          --rules PATH            commission rules file, re-read on SIGHUP
          --max-line-bytes N      longest accepted line in bytes (default 65536)
          --max-connections N     connections served at once; more wait in the backlog (default 1024)
          --idle-timeout SECONDS  close a connection without progress this long (default 300)
          --allow-uid UID|NAME    also serve this uid (repeatable; root and the daemon's uid always)
          --allow-gid GID|NAME    also serve peers in this group, primary or supplementary (repeatable)
          --durability full|normal  synchronous=FULL (default, survives power loss) or NORMAL
          --drain-timeout SECONDS time to finish read records after SIGTERM (default 5)
          --journal-only          do not keep attribution current (bulk back-fills; reports recompute
                                  until `offertrack rebuild` or the next normal start)
          --help, --version

        Example:
          offertrackd --socket /tmp/ot.sock --db /tmp/ot.db --allow-gid offertrack-writers
        """
}
