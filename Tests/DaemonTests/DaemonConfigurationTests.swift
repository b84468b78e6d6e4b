import JournalStore
import OfferTrackDaemon
import TestSupport
import Testing

/// `offertrackd`'s command line, by tables of cases: what each flag sets, and what is refused (exit 64).
@Suite struct DaemonConfigurationTests {
    static func parsed(_ arguments: [String], stateDirectory: String? = nil) throws -> DaemonConfiguration {
        guard case .run(let configuration) = try DaemonConfiguration.parse(arguments, stateDirectory: stateDirectory)
        else { throw UsageError("not a run") }
        return configuration
    }

    @Test func theDefaults() throws {
        let configuration = try Self.parsed([])
        #expect(configuration == DaemonConfiguration())
        #expect(configuration.socketPath == "./offertrack.sock" && !configuration.socketPathGiven)
        #expect(configuration.databasePath == "./offertrack.db")
        #expect(configuration.maxLineBytes == 65536 && configuration.maxConnections == 1024)
        #expect(configuration.idleTimeoutSeconds == 300 && configuration.drainTimeoutSeconds == 5)
        #expect(configuration.durability == .full && !configuration.journalOnly)
        #expect(configuration.metricsAddress == nil && configuration.forwardServers.isEmpty)
    }

    @Test func theStateDirectoryHoldsTheJournalUnderSystemd() throws {
        #expect(
            try Self.parsed([], stateDirectory: "/var/lib/offertrack").databasePath
                == "/var/lib/offertrack/offertrack.db")
        #expect(try Self.parsed(["--db", "/x.db"], stateDirectory: "/var/lib/offertrack").databasePath == "/x.db")
    }

    /// (arguments, what they must set)
    static let accepted: [([String], @Sendable (DaemonConfiguration) -> Bool)] = [
        (["--socket", "/run/o.sock"], { $0.socketPath == "/run/o.sock" && $0.socketPathGiven }),
        (["--socket=/run/o.sock"], { $0.socketPath == "/run/o.sock" && $0.socketPathGiven }),
        (["--db", "/tmp/j.db"], { $0.databasePath == "/tmp/j.db" }),
        (["--rules=/etc/r.json"], { $0.rulesPath == "/etc/r.json" }),
        (["--max-line-bytes", "1024"], { $0.maxLineBytes == 1024 }),
        (["--max-connections", "8"], { $0.maxConnections == 8 }),
        (["--idle-timeout", "2"], { $0.idleTimeoutSeconds == 2 }),
        (["--drain-timeout", "1"], { $0.drainTimeoutSeconds == 1 }),
        (["--allow-uid", "1000", "--allow-uid", "0"], { $0.allowedUIDs == [1000, 0] }),
        (["--allow-gid", "root"], { $0.allowedGIDs == [0] }),
        (["--journal-only"], { $0.journalOnly }),
        (["--durability", "normal"], { $0.durability == .normal }),
        (["--metrics-listen", "127.0.0.1:9464"], { $0.metricsAddress == .tcp(host: "127.0.0.1", port: 9464) }),
        (["--metrics-listen", "localhost:9"], { $0.metricsAddress == .tcp(host: "127.0.0.1", port: 9) }),
        (["--metrics-listen", "[::1]:9464"], { $0.metricsAddress == .tcp(host: "::1", port: 9464) }),
        (["--metrics-listen", "/run/m.sock"], { $0.metricsAddress == .unix(path: "/run/m.sock") }),
        // An edge keeps no attribution: --forward implies --journal-only.
        (["--forward", "nats://a:4222,tls://b:4222"], { $0.forwardServers.count == 2 && $0.journalOnly }),
        (
            ["--consume", "nats://a:4222", "--partitions", "0-3,8"],
            { $0.consumeServers == ["nats://a:4222"] && $0.partitions == [0, 1, 2, 3, 8] }
        ),
        (["--partitions-total", "4", "--consume", "nats://a:1", "--partitions", "3"], { $0.partitionsTotal == 4 }),
        (["--consume", "nats://a:1", "--partitions", "3"], { $0.consumeBatch == 2048 }),
        (["--consume", "nats://a:1", "--partitions", "3", "--consume-batch", "16"], { $0.consumeBatch == 16 }),
        (
            ["--stream", "RECORDS", "--stream-replicas", "1", "--stream-max-mb", "64"],
            {
                $0.streamName == "RECORDS" && $0.streamReplicas == 1 && $0.streamMaxMegabytes == 64
            }
        ),
        // The last of a repeated flag wins.
        (["--db", "a.db", "--db", "b.db"], { $0.databasePath == "b.db" }),
    ]

    @Test(arguments: accepted)
    func eachFlagSetsItsSetting(arguments: [String], check: @Sendable (DaemonConfiguration) -> Bool) throws {
        #expect(check(try Self.parsed(arguments)), "\(arguments)")
    }

    @Test(arguments: [(["--help"], DaemonCommand.help), (["-h"], .help), (["--version"], .version)])
    func helpAndVersion(arguments: [String], expected: DaemonCommand) throws {
        #expect(try DaemonConfiguration.parse(arguments, stateDirectory: nil) == expected)
    }

    /// (arguments, a part of the message)
    static let refused: [([String], String)] = [
        (["--db"], "--db needs a value"),
        (["--bogus"], "unknown argument --bogus"),
        (["extra"], "unknown argument extra"),
        (["--max-line-bytes", "0"], "--max-line-bytes must be a whole number from 1 to"),
        (["--max-connections", "many"], "--max-connections must be a whole number"),
        (["--idle-timeout", "-1"], "--idle-timeout must be a whole number"),
        (["--drain-timeout", "3601"], "from 1 to 3600"),
        (["--allow-uid", "no-such-user-here"], "--allow-uid: no such user or group"),
        (["--durability", "off"], "--durability must be full or normal"),
        (["--durability", "unsafe-off-for-tests"], "--durability must be full or normal"),
        (["--metrics-listen", "9464"], "--metrics-listen takes HOST:PORT"),
        (["--metrics-listen", ":9464"], "--metrics-listen takes HOST:PORT"),
        (["--forward", "http://a:1"], "--forward takes nats://"),
        (["--forward", "nats://a:1", "--consume", "nats://b:1", "--partitions", "0"], "exclude each other"),
        (["--consume", "nats://a:1"], "--consume and --partitions go together"),
        (["--partitions", "0"], "--consume and --partitions go together"),
        (["--consume", "nats://a:1", "--partitions", "0,0"], "names a partition twice"),
        (["--consume", "nats://a:1", "--partitions", "3-1"], "--partitions takes a list"),
        (["--consume", "nats://a:1", "--partitions", "16"], "is not below --partitions-total 16"),
        (["--stream", "a.b"], "--stream must be a stream name"),
        (["--stream-replicas", "6"], "from 1 to 5"),
        (["--consume-batch", "0"], "--consume-batch must be a whole number from 1 to"),
    ]

    /// Refused by the parser with `message`, and by the real `offertrackd` with exit 64 (`EX_USAGE`) and the
    /// message. (Its journal and socket would be in a directory that does not exist, so a command line wrongly
    /// taken cannot start a daemon.)
    @Test(arguments: refused)
    func badArgumentsAreUsageErrors(arguments: [String], message: String) throws {
        #expect {
            _ = try DaemonConfiguration.parse(arguments, stateDirectory: nil)
        } throws: { error in
            "\(error)".contains(message)
        }
        let nowhere = ["--db", "/nonexistent/offertrack.db", "--socket", "/nonexistent/offertrack.sock"]
        let outcome = try Shell.run(Binaries.daemon, nowhere + arguments)
        #expect(
            outcome.status == 64 && outcome.output.contains(message),
            "offertrackd \(arguments.joined(separator: " ")): exit \(outcome.status), \(outcome.output)")
    }
}
