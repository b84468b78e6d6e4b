import Fleet
import JournalStore
import OfferTrackDomain
import Posix
import PublishedLedger
import WireFormat

/// What every command takes: the journal and the rules file (SPEC section 6).
struct CommonOptions {
    /// The journal (the first `--db`, or the default).
    let databasePath: String
    /// Every `--db` given (SPEC section 10: central journals read as one), or the default alone.
    let databasePaths: [String]
    let rulesPath: String?
    /// What the executable read from its environment.
    let environment: CommandEnvironment

    init(_ arguments: CommandArguments, _ environment: CommandEnvironment) {
        self.environment = environment
        let given = arguments.values("--db")
        databasePaths = given.isEmpty ? [Paths.database(nil, environment)] : given
        databasePath = databasePaths[0]
        rulesPath = arguments.value("--rules")
    }

    /// Refuses more than one `--db` for a command that reads one journal.
    func requireOneJournal(_ command: String) throws(CLIError) {
        guard databasePaths.count == 1 else { throw CLIError(.usage, "\(command) takes one --db") }
    }

    /// The rules file's contents, or the built-in rules when none is given. A bad file is exit 78, and so are
    /// rules whose windows differ from those a journal's days were sealed with (SPEC 12).
    func loadRules() throws(CLIError) -> RulesFile {
        let rules = try rulesPath.map { path throws(CLIError) in try Self.readRules(path) } ?? .builtIn
        try checkSealedWindows(rules.rules.settings)
        return rules
    }

    /// The rules file at `path`: exit 78 when it cannot be read or is malformed, naming the key or rule.
    static func readRules(_ path: String) throws(CLIError) -> RulesFile {
        guard let bytes = FileSystem.readFile(path) else {
            throw CLIError(.configuration, "cannot read the rules file \(path)")
        }
        do {
            return try RulesFile(bytes: bytes)
        } catch {
            throw CLIError(.configuration, "\(path): \(error.located)")
        }
    }

    /// Refuses windows other than those a journal's days were sealed with (exit 78, naming the key). A journal
    /// that cannot be read is left to the command, which says why.
    private func checkSealedWindows(_ settings: AttributionSettings) throws(CLIError) {
        for path in databasePaths where CurrentProcess.fileSize(path) != nil {
            guard let journal = try? ReadOnlyJournal(path: path, schema: .anyVersion),
                let state = try? journal.sealState(), let refusal = state.check(settings)
            else { continue }
            let file = rulesPath ?? "the built-in rules (no --rules)"
            throw CLIError(.configuration, "\(file): \(refusal.located) in \(path)")
        }
    }

    /// The rules of a command that publishes money (SPEC 6): never a file nobody gave. Without `--rules` it is nil
    /// when every journal has `period` published already (`isPublished`: its files are rewritten as first
    /// published), else exit 64 naming `--rules`, before anything else is checked or written.
    func publishingRules(
        _ command: String, period: String, isPublished: (ReadOnlyJournal) throws -> Bool
    ) throws(CLIError) -> RulesFile? {
        guard rulesPath == nil else { return try loadRules() }
        let publishedEverywhere = databasePaths.allSatisfy { path in
            guard let journal = try? ReadOnlyJournal(path: path) else { return false }
            return (try? isPublished(journal)) ?? false
        }
        guard publishedEverywhere else {
            throw CLIError(
                .usage,
                "--rules PATH is required: \(period) is not published, and \(command) never publishes money from "
                    + "rules nobody gave")
        }
        return nil
    }

    /// Opens the journal read-only, refusing another schema version (SPEC section 6): 66 when it does not
    /// exist, 65 when it is corrupt, 69 when it cannot be read or has another schema (naming both versions).
    func openJournal(schema: SchemaPolicy = .requireCurrent) throws(CLIError) -> ReadOnlyJournal {
        try open(databasePath, schema: schema)
    }

    /// Every `--db`, opened as `openJournal` opens one; several must be distinct journals of one fleet that
    /// share no partition and one P (SPEC 10), else exit 65.
    func openJournals(schema: SchemaPolicy = .requireCurrent) throws(CLIError) -> [ReadOnlyJournal] {
        var readers: [ReadOnlyJournal] = []
        for path in databasePaths { readers.append(try open(path, schema: schema)) }
        guard readers.count > 1 else { return readers }
        do {
            try FleetJournals.check(readers)
        } catch let refusal as FleetJournals.Refusal {
            throw CLIError(.dataError, "refused: \(refusal)")
        } catch {
            throw CLIError(journal: error, doing: "reading \(databasePaths.joined(separator: ", "))")
        }
        return readers
    }

    /// Opens the journal at `path` as `openJournal` opens `--db`.
    func open(_ path: String, schema: SchemaPolicy) throws(CLIError) -> ReadOnlyJournal {
        do {
            return try ReadOnlyJournal(path: path, schema: schema)
        } catch {
            throw CLIError(journal: error, doing: "opening \(path)")
        }
    }
}

extension CLIError {
    /// The exit code for a failure of the journal: each kind its own sysexits code.
    init(journal error: any Error, doing what: String) {
        let code: ExitCode =
            switch JournalOpening.kind(of: error) {
            case .missing: .noInput
            case .corrupt: .dataError
            case .otherSchema: .unavailable
            case .busy: .tryAgain
            case .full, .readOnly: .cannotCreate
            case .ioError: .ioError
            case .other: .software
            }
        self.init(code, code == .unavailable || code == .noInput ? "\(error)" : "\(what): \(error)")
    }
}

/// Parsing the CLI's `--since`/`--until` values.
enum TimeArgument {
    /// RFC 3339, or `YYYY-MM-DD` meaning UTC midnight.
    static func parse(_ text: String, option: String) throws(CLIError) -> Int64 {
        if let ms = Timestamp.parse(text) ?? Timestamp.parseDay(text) { return ms }
        throw CLIError(.usage, "\(option) takes an RFC 3339 time or YYYY-MM-DD, not \(text)")
    }

    /// `--as-of`: when conversions are seen (rule 4.6's pending or qualified); the current time when absent.
    static func asOf(_ parsed: CommandArguments) throws(CLIError) -> Int64 {
        guard let text = parsed.value("--as-of") else { return Clock.wallMilliseconds() }
        return try parse(text, option: "--as-of")
    }
}
