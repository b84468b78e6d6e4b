import AttributionJoin
import JournalStore
import OfferTrackDomain
import Posix
import WireFormat

/// `offertrack rules check FILE [--rules CURRENT] [--db PATH]… [--as-of TS]`: reads a rules file as the daemon and
/// every command read it, before anyone reloads it, and says what it would change.
struct RulesCommand {
    static let help = """
        Usage: offertrack rules check FILE [--rules CURRENT] [--db PATH]... [--as-of TS]

        Reads FILE as offertrackd and every command read a rules file (offertrack-rules(5), docs/rules.md)
        and prints "FILE: valid: " and its keys, or why it is malformed (exit 78, naming the key or the rule's
        index).
        With --rules CURRENT (the rules in force, /etc/offertrack/rules.json on a server) it also prints what
        FILE changes: each top-level key whose value differs, and each rule added, removed or changed (a rule is
        known by its affiliateToken, campaignToken and from). With --db as well, the commission per affiliate
        that differs at --as-of (default now) under CURRENT and under FILE: qualified, pending and held. It
        reads only; nothing is reloaded. Check a file, then install it and reload offertrackd.
        Exit: 0 valid, 78 FILE or CURRENT malformed or unreadable, 64 usage, 66/69 a --db journal missing or
        of another schema.

        Example:
          offertrack rules check rules.new.json --rules /etc/offertrack/rules.json
          offertrack rules check rules.new.json --rules /etc/offertrack/rules.json \\
              --db /var/lib/offertrack/offertrack.db --as-of 2026-12-01
        """

    let options: CommonOptions
    let file: String
    /// Whether `--db` was given: the money is compared only then.
    let comparesMoney: Bool
    let asOf: Int64

    init(arguments: [String], environment: CommandEnvironment = CommandEnvironment()) throws(CLIError) {
        let parsed = try CommandArguments(arguments, valued: ["--db", "--rules", "--as-of"])
        guard parsed.positionals.first == "check" else {
            throw CLIError(.usage, "rules takes a subcommand: rules check FILE [--rules CURRENT] [--db PATH]")
        }
        guard parsed.positionals.count == 2, let file = parsed.positionals.last, !file.isEmpty else {
            throw CLIError(.usage, "rules check takes one FILE")
        }
        options = CommonOptions(parsed, environment)
        self.file = file
        comparesMoney = !parsed.values("--db").isEmpty
        if comparesMoney && options.rulesPath == nil {
            throw CLIError(.usage, "--db compares the commission under two files: give the rules in force as --rules")
        }
        asOf = try TimeArgument.asOf(parsed)
    }

    func run() throws(CLIError) -> Int32 {
        let new = try CommonOptions.readRules(file)
        try Output.write("\(file): valid: \(RulesChanges.summary(new.rules))\n")
        guard let currentPath = options.rulesPath else { return 0 }
        let current = try CommonOptions.readRules(currentPath)
        let changes = RulesChanges(from: current.rules, to: new.rules)
        var text = "changes from \(currentPath):\n"
        text += changes.lines.isEmpty ? "  none\n" : changes.lines.map { "  \($0)\n" }.joined()
        if changes.windowsChange {
            text += "  on reload: the daemon recomputes every derived table (reports see the old windows until then)\n"
        }
        if comparesMoney {
            text += try moneyChanges(from: current.rules, to: new.rules, mayChange: changes.moneyMayChange)
        }
        try Output.write(text)
        return 0
    }

    /// The affiliates whose qualified, pending or held commission at `asOf` differs between the two files.
    private func moneyChanges(from current: CommissionRules, to new: CommissionRules, mayChange: Bool)
        throws(CLIError) -> String
    {
        let heading = "commission by affiliate at \(Timestamp.format(asOf)), in force -> FILE:\n"
        let readers = try options.openJournals()
        guard mayChange || current.currency != new.currency else { return heading + "  no change\n" }
        let before: [ReportRow]
        let after: [ReportRow]
        do {
            before = try FunnelQuery.rows(readers, grouping: .affiliate, range: .all, rules: current, asOf: asOf)
            after = try FunnelQuery.rows(readers, grouping: .affiliate, range: .all, rules: new, asOf: asOf)
        } catch let overflow as MoneyOverflow {
            throw CLIError(.dataError, "\(overflow); check the rules file's amounts")
        } catch {
            throw CLIError(.ioError, "reading \(options.databasePaths.joined(separator: ", ")): \(error)")
        }
        let old = Dictionary(before.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let now = Dictionary(after.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        let keys = Set(old.keys).union(now.keys).sorted { ($0 ?? "\u{10FFFF}") < ($1 ?? "\u{10FFFF}") }
        var lines: [String] = []
        for key in keys {
            let a = old[key]
            let b = now[key]
            let kinds: [(String, Int64, Int64)] = [
                ("qualified", a?.commissionMinor ?? 0, b?.commissionMinor ?? 0),
                ("pending", a?.pendingCommissionMinor ?? 0, b?.pendingCommissionMinor ?? 0),
                ("held", a?.heldCommissionMinor ?? 0, b?.heldCommissionMinor ?? 0),
            ]
            guard current.currency != new.currency || kinds.contains(where: { $0.1 != $0.2 }) else { continue }
            let amounts = kinds.map { name, from, to in
                "\(name) \(Money.format(from, currency: current.currency)) -> \(Money.format(to, currency: new.currency))"
            }
            lines.append("  \(key ?? "(none)"): " + amounts.joined(separator: ", "))
        }
        return heading + (lines.isEmpty ? "  no change\n" : lines.joined(separator: "\n") + "\n")
    }
}
