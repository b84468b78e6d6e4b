import AttributionJoin
import Fleet
import JournalStore
import JournalVerification
import OfferTrackDomain
import Posix
import Simulator
import WireFormat

/// `offertrack rebuild`: recomputes every derived table from the journal.
struct RebuildCommand {
    static let help = """
        Usage: offertrack rebuild [--db PATH] [--rules PATH]

        Recomputes attribution's derived tables from every journaled record, under the windows of the rules
        file, in one transaction. Reports before and after are identical. While it runs it holds the journal's
        write lock: the daemon answers storage_unavailable and clients retry. Besides the daemon, it is the only
        command that migrates a journal of an older schema.
        Exit: 66 no journal, 65 corrupt, 69 a newer schema, 75 locked (retry), 73 disk full or read-only,
        74 I/O error, 78 bad rules file, 70 anything else.

        Example:
          offertrack rebuild --db /var/lib/offertrack/offertrack.db --rules /etc/offertrack/rules.json
        """

    let options: CommonOptions

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "rebuild takes no arguments") }
        options = CommonOptions(parsed, environment)
    }

    func run() throws(CLIError) -> Int32 {
        let rules = try options.loadRules()
        guard CurrentProcess.fileSize(options.databasePath) != nil else {
            throw CLIError(.noInput, "no journal at \(options.databasePath)")
        }
        do {
            let writerOptions = JournalWriter.Options(
                durability: .full, schema: .migrate, busyTimeoutMilliseconds: 30_000, maintainsDerivedTables: false,
                migrationLog: Logger(program: "offertrack"))
            let writer = try JournalWriter(
                path: options.databasePath, options: writerOptions, settings: rules.rules.settings,
                tuning: .init(migration: options.environment.migrationTuning))
            try writer.rebuildDerivedTables(settings: rules.rules.settings)
        } catch {
            throw CLIError(journal: error, doing: "rebuilding \(options.databasePath)")
        }
        try Output.write("rebuilt the derived tables of \(options.databasePath)\n")
        return 0
    }
}

/// `offertrack verify`: integrity and invariants.
struct VerifyCommand {
    static let help = """
        Usage: offertrack verify [--db PATH] [--rules PATH] [--edge PATH]

        Runs PRAGMA integrity_check and checks the invariants: every derived row traces back to journaled
        records, the per-user index lists every record once under its user, at most one conversion per user,
        and the derived tables equal a recomputation from scratch.
        Prints one line per check. With --db given more than once (a fleet's central journals) each journal
        is checked under a `journal PATH` line, and then that no user has records in two of them.
        --edge PATH (repeatable; an edge daemon's journal, read-only while it runs) also checks that every
        record of that edge the stream acknowledged is in one of the --db journals (every central journal of
        the fleet) with the same content, naming the first ten that are not and the `offertrack forward` that
        sends the missing ones again. Run it once the centrals' consuming lag is 0 (offertrack status).
        Exit 0 when all pass, 65 when one fails.

        Example:
          offertrack verify --db /var/lib/offertrack/offertrack.db
        """

    let options: CommonOptions

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--edge"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "verify takes no arguments") }
        options = CommonOptions(parsed, environment)
        edgePaths = parsed.values("--edge")
    }

    /// The edge journals whose forwarded records are looked for in the `--db` journals.
    let edgePaths: [String]

    func run() throws(CLIError) -> Int32 {
        _ = try options.loadRules()
        let readers = try options.openJournals()
        var text = ""
        var passed = true
        func add(_ checks: [JournalVerifier.Check]) {
            for check in checks {
                if let reason = check.skipped {
                    text += "skipped: \(check.name): \(reason)\n"
                    continue
                }
                text += "\(check.passed ? "ok" : "FAILED"): \(check.name)\n"
                for problem in check.problems { text += "  \(problem)\n" }
                passed = passed && check.passed
            }
        }
        for reader in readers {
            if readers.count > 1 { text += "journal \(reader.path)\n" }
            do { add(try JournalVerifier.verify(reader)) } catch {
                throw CLIError(journal: error, doing: "reading \(reader.path)")
            }
        }
        if readers.count > 1 {
            text += "all journals\n"
            do { add([try JournalVerifier.usersAreDisjoint(readers)]) } catch {
                throw CLIError(journal: error, doing: "reading the journals")
            }
        }
        for path in edgePaths {
            if let identity = CurrentProcess.fileIdentity(path),
                readers.contains(where: { CurrentProcess.fileIdentity($0.path) == identity })
            {
                throw CLIError(.usage, "\(path) is given as --edge and as --db: an edge's journal is not a central's")
            }
            let edge = try options.open(path, schema: .requireCurrent)
            do { add([try EdgeReconciliation.check(edge: edge, centrals: readers)]) } catch {
                throw CLIError(journal: error, doing: "reading \(path) and the central journals")
            }
        }
        try Output.write(text)
        return passed ? 0 : ExitCode.dataError.rawValue
    }
}

/// `offertrack simulate`: a deterministic NDJSON workload on stdout.
struct SimulateCommand {
    static let help = """
        Usage: offertrack simulate --users N [--seed S] [--start TS] [--days D] [--returning [--records M]]
                                   [--db PATH] [--rules PATH]

        Prints a realistic, deterministic NDJSON workload: capability checks in every authorization state and
        form, presentations with and without tokens, explicit and derived outcomes, late and duplicate records,
        trials that end unpaid. The same arguments always print the same bytes. --start defaults to
        2026-11-01T00:00:00Z, --days to 1 (7 with --returning).
        --returning: users come back over the days (a check at every visit, the offer shown again, outcomes
        later; about 6 records a user), all records in time order, so each user's records spread over the
        whole output. It holds the output in memory (about 300 bytes a record); --records M stops after M.

        Example:
          offertrack simulate --users 1000 | offertrack ingest -
          offertrack simulate --users 50000 --returning --records 300000 > returning.ndjson
        """

    let users: Int
    let seed: UInt64
    let start: Int64
    let days: Int
    let returning: Bool
    let records: Int?

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(
            arguments, valued: ["--users", "--seed", "--start", "--days", "--records", "--db", "--rules"],
            switches: ["--help", "--returning"])
        guard parsed.positionals.isEmpty else { throw CLIError(.usage, "simulate takes no arguments") }
        guard let usersText = parsed.value("--users") else { throw CLIError(.usage, "simulate needs --users N") }
        guard let users = Int(usersText), users >= 0 else {
            throw CLIError(.usage, "--users must be a whole number, not \(usersText)")
        }
        self.users = users
        let seedText = parsed.value("--seed") ?? "1"
        guard let seed = UInt64(seedText) else { throw CLIError(.usage, "--seed must be a whole number") }
        self.seed = seed
        start =
            try parsed.value("--start").map { text throws(CLIError) in
                try TimeArgument.parse(text, option: "--start")
            } ?? WorkloadSimulator.defaultStart
        returning = parsed.has("--returning")
        let daysText = parsed.value("--days") ?? (returning ? "7" : "1")
        guard let days = Int(daysText), days >= 1, days <= 3650 else {
            throw CLIError(.usage, "--days must be from 1 to 3650, not \(daysText)")
        }
        self.days = days
        if let text = parsed.value("--records") {
            guard returning else { throw CLIError(.usage, "--records goes with --returning") }
            guard let records = Int(text), records >= 0 else {
                throw CLIError(.usage, "--records must be a whole number, not \(text)")
            }
            self.records = records
        } else {
            records = nil
        }
    }

    func run() throws(CLIError) -> Int32 {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 17)
        let lines: AnySequence<String> =
            returning
            ? AnySequence(
                ReturningUserSimulator(users: users, seed: seed, start: start, days: days, records: records).lines)
            : AnySequence(WorkloadSimulator(users: users, seed: seed, start: start, days: days).lines)
        for line in lines {
            buffer.append(contentsOf: line.utf8)
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= 1 << 16 {
                try flush(&buffer)
            }
        }
        try flush(&buffer)
        return 0
    }

    private func flush(_ buffer: inout [UInt8]) throws(CLIError) {
        do { try FileDescriptor.writeAll(1, buffer) } catch { throw CLIError(.ioError, "stdout: \(error)") }
        buffer.removeAll(keepingCapacity: true)
    }
}
