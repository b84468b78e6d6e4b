import Foundation
import SQLite
import TestSupport
import Testing

/// The README and docs/ name only flags the binaries accept and only `status`/`explain` JSON keys the binaries
/// print; the key tables list every key `status` prints. Flags come from code spans and code blocks; each is
/// checked against the program the span runs (an `offertrack` command, `offertrackd`, one of our scripts, or an
/// allow-listed tool), or against every flag of both binaries when the span names no program.
@Suite struct DocumentationTests {
    /// The documentation checked: the README and every page of docs/.
    static var files: [String] {
        let pages = (try? FileManager.default.contentsOfDirectory(atPath: Repository.file("docs"))) ?? []
        return ["README.md"] + pages.filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
    }

    /// Flags of other programs that the docs name, by program. Kept small: each is a tool an operator runs beside
    /// offertrack (building, packaging, systemd, the NATS CLI, node_exporter), and each flag is one of its own.
    static let otherTools: [String: Set<String>] = [
        "swift": ["--build-tests", "--skip-build", "--filter", "--static-swift-stdlib", "--product"],
        "swift-format": ["--strict", "--recursive"],
        "systemd-analyze": ["--offline", "--threshold"],
        "systemd-tmpfiles": ["--create"],
        "dpkg": ["--install", "--remove", "--purge", "--force-confold"],
        "systemctl": ["--now", "--failed"],
        "dpkg-deb": ["--build"],
        "nats": ["--max-age"],
        "node_exporter": ["--collector.textfile.directory"],
    ]

    /// Code blocks (fenced) and code spans of a Markdown text, in order.
    static func codeParts(of text: String) -> [String] {
        var parts: [String] = []
        var prose = ""
        var block: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                if let lines = block {
                    parts.append(lines.joined(separator: "\n"))
                    block = nil
                } else {
                    block = []
                }
            } else if block != nil {
                block?.append(line)
            } else {
                prose += line + "\n"
            }
        }
        let spans = prose.split(separator: "`", omittingEmptySubsequences: false)
        for (index, span) in spans.enumerated() where index % 2 == 1 {
            // A span wrapped over lines is one line of code.
            parts.append(span.replacingOccurrences(of: "\n", with: " "))
        }
        return parts
    }

    /// `(flag, the program it is given to)` for every flag in a piece of code: the program is the last one named
    /// before the flag on its line (nil when none is).
    static func flagUses(in code: String) -> [(flag: String, program: String?, command: String?)] {
        var uses: [(String, String?, String?)] = []
        for rawLine in code.split(separator: "\n") {
            let line = rawLine.components(separatedBy: " # ")[0]
            var program: String?
            var command: String?
            let words = line.split(whereSeparator: { " \t|;()&".contains($0) }).map(String.init)
            for (index, written) in words.enumerated() {
                // `[--since TS]`, `(--user USER`, `"--note"`: the word without what encloses it.
                let word = String(written.drop { "[({\"'".contains($0) })
                // A program is named bare or by where it is installed or built, not by a data path (/var/lib/…).
                let places = ["./", ".build/", "/usr/bin/", "/usr/lib/offertrack/", "scripts/"]
                let named = !word.contains("/") || places.contains { word.hasPrefix($0) }
                let name = named ? String(word.split(separator: "/").last ?? "") : ""
                if word.hasPrefix("--") || word == "-h" {
                    // `--note=--urgent`: the flag is what comes before `=`.
                    let flag = String(word.split(separator: "=", maxSplits: 1)[0])
                    for flag in AcceptedFlags.flags(in: flag) { uses.append((flag, program, command)) }
                } else if name == "offertrack" {
                    program = name
                    let next = index + 1 < words.count ? words[index + 1] : ""
                    command = AcceptedFlags.commands.contains(next) ? next : nil
                } else if name == "offertrackd" || otherTools[name] != nil || word.hasPrefix("scripts/")
                    || (name.hasPrefix("offertrack-")
                        && FileManager.default.fileExists(atPath: Repository.file("scripts/\(name)")))
                {
                    program = word.hasPrefix("scripts/") ? word : name
                    command = nil
                }
            }
        }
        return uses
    }

    /// Whether `program` (nil: none named) takes `flag`.
    static func takes(_ program: String?, _ command: String?, _ flag: String) -> Bool {
        switch program {
        case nil: return AcceptedFlags.any.contains(flag)
        case "offertrackd": return AcceptedFlags.daemon.contains(flag)
        case "offertrack":
            guard let command else { return AcceptedFlags.topLevel.contains(flag) }
            return AcceptedFlags.byCommand[command]?.contains(flag) == true
        case let script? where script.hasPrefix("scripts/") || script.hasPrefix("offertrack-"):
            // Our own scripts: the flag is in the script (scripts/bench passes its flags to bench/Sources).
            let path = script.hasPrefix("scripts/") ? script : "scripts/\(script)"
            var texts = [(try? String(contentsOfFile: Repository.file(path), encoding: .utf8)) ?? ""]
            if path == "scripts/bench" {
                let enumerator = FileManager.default.enumerator(atPath: Repository.file("bench/Sources"))
                while let file = enumerator?.nextObject() as? String {
                    texts.append(
                        (try? String(contentsOfFile: Repository.file("bench/Sources/\(file)"), encoding: .utf8)) ?? "")
                }
            }
            return texts.contains { AcceptedFlags.flags(in: $0).contains(flag) }
        case let tool?: return otherTools[tool]?.contains(flag) == true
        }
    }

    /// The `--version` lines the manual quotes are what the binaries print (the journal schema moves with each
    /// migration).
    @Test func theVersionLinesTheManualQuotesAreTheBinaries() throws {
        for (binary, page) in [(Binaries.cli, "docs/cli.md"), (Binaries.daemon, "docs/operating.md")] {
            let printed = try Shell.run(binary, ["--version"]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            let text = try String(contentsOfFile: Repository.file(page), encoding: .utf8)
            #expect(printed.contains("(journal schema "), "\(printed)")
            #expect(text.contains("(`\(printed)`)"), "\(page) does not quote `\(printed)`")
        }
    }

    @Test func everyFlagTheDocsNameIsAccepted() throws {
        var checked = 0
        for file in Self.files {
            let text = try String(contentsOfFile: Repository.file(file), encoding: .utf8)
            for part in Self.codeParts(of: text) {
                for use in Self.flagUses(in: part) {
                    checked += 1
                    let who = [use.program, use.command].compactMap { $0 }.joined(separator: " ")
                    #expect(
                        Self.takes(use.program, use.command, use.flag),
                        "\(file): \(use.flag) is not a flag of \(who.isEmpty ? "offertrack or offertrackd" : who): `\(part)`"
                    )
                }
            }
        }
        #expect(checked > 100, "only \(checked) flags found in the docs")
    }

    /// The code spans of the first column of every table whose header's first cell is `heading`.
    static func tableKeys(_ heading: String) throws -> Set<String> {
        var keys: Set<String> = []
        for file in files {
            let lines = try String(contentsOfFile: Repository.file(file), encoding: .utf8).split(separator: "\n")
            var inTable = false
            for line in lines {
                if line.hasPrefix("| \(heading) |") {
                    inTable = true
                } else if inTable && line.hasPrefix("|") {
                    let cell = line.split(separator: "|", omittingEmptySubsequences: false)[1]
                    let spans = cell.split(separator: "`", omittingEmptySubsequences: false)
                    for (index, span) in spans.enumerated() where index % 2 == 1 { keys.insert(String(span)) }
                } else {
                    inTable = false
                }
            }
        }
        return keys.subtracting(["---"])
    }

    /// Every key path of a JSON value (`a`, `a.b`; arrays are looked through).
    static func paths(_ value: Any, prefix: String = "") -> Set<String> {
        if let array = value as? [Any] { return array.reduce(into: []) { $0.formUnion(paths($1, prefix: prefix)) } }
        guard let object = value as? [String: Any] else { return [] }
        var result: Set<String> = []
        for (key, member) in object {
            let path = prefix.isEmpty ? key : "\(prefix).\(key)"
            result.insert(path)
            result.formUnion(paths(member, prefix: path))
        }
        return result
    }

    static func json(_ arguments: [String]) throws -> Any {
        let outcome = try Shell.run(Binaries.cli, arguments)
        let line = outcome.output.split(separator: "\n").first { $0.hasPrefix("{") || $0.hasPrefix("[") } ?? ""
        return try JSONSerialization.jsonObject(with: Data(line.utf8))
    }

    /// A journal of the simulator's traffic (reviews and erasures included), made by a real daemon.
    static func journal(in directory: ScratchDirectory) throws -> String? {
        let rules = Repository.file("systemd/rules.example.json")
        let daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules])
        guard daemon.waitReady() else { return nil }
        let ingest = try Shell.run(
            "/bin/sh",
            [
                "-c", #""$0" simulate --users 600 --start 2026-09-01 --days 30 | "$0" ingest - --socket "$1""#,
                Binaries.cli, daemon.socketPath,
            ])
        #expect(ingest.status == 0 && ingest.output.contains("rejected 0"), "\(ingest.output)")
        daemon.signal(2)
        #expect(daemon.waitExit() == 0)
        return daemon.databasePath
    }

    @Test func theStatusAndExplainKeysTheDocsNameAreTheBinariesKeys() throws {
        let directory = ScratchDirectory()
        guard let journal = try Self.journal(in: directory) else { return }
        let rules = Repository.file("systemd/rules.example.json")
        let socket = directory.file("nobody-listens.sock")
        // status of a plain journal, then of copies that record a fleet (a central's partitions and an edge's
        // watermark, as the daemons record them in `meta`), so that consume, forward and stream are objects.
        let plain = try Self.json(["status", "--db", journal, "--socket", socket, "--format", "json"])
        let fleet = directory.file("fleet.db")
        try FileManager.default.copyItem(atPath: journal, toPath: fleet)
        let connection = try Connection(path: fleet, mode: .readWrite)
        try connection.execute(
            """
            INSERT INTO meta (key, value) VALUES ('fleet_stream', 'OFFERTRACK'), ('fleet_partitions_total', '16'),
                ('fleet_partitions', '0,1'), ('forward_acked_seq', '10')
            """)
        let fleetStatus = try Self.json(["status", "--db", fleet, "--socket", socket, "--format", "json"])
        let statusPaths = Self.paths(plain).union(Self.paths(fleetStatus))
        for key in ["consume.partitions", "forward.lagRecords", "stream.up", "records.erasure"] {
            #expect(statusPaths.contains(key), "\(key): \(statusPaths.sorted())")
        }
        let statusKeys = try Self.tableKeys("status key")
        #expect(!statusKeys.isEmpty, "no `| status key |` table in the docs")
        #expect(
            statusKeys.subtracting(statusPaths).isEmpty, "not printed: \(statusKeys.subtracting(statusPaths).sorted())")
        #expect(
            statusPaths.subtracting(statusKeys).isEmpty,
            "not documented: \(statusPaths.subtracting(statusKeys).sorted())")

        // explain of a shared id and of a forgotten person (conversion, presentation, eligibility and erasure).
        guard let status = plain as? [String: Any], let busiest = status["busiestUsersToday"] as? [String: Any],
            let users = busiest["users"] as? [[String: Any]],
            let erased = users.compactMap({ $0["user"] as? String }).first(where: { $0.hasPrefix("erased:") })
        else {
            Issue.record("no erased user among today's busiest: \(plain)")
            return
        }
        var explainPaths: Set<String> = []
        var topLevel: Set<String> = []
        for user in ["anonymous", erased] {
            let explained = try Self.json(
                [
                    "explain", "--db", journal, "--rules", rules, "--user", user, "--format", "json", "--as-of",
                    "2026-12-01",
                ])
            explainPaths.formUnion(Self.paths(explained))
            topLevel.formUnion((explained as? [String: Any])?.keys.map { $0 } ?? [])
        }
        #expect(explainPaths.contains("erasure.ticket"), "\(explainPaths.sorted())")
        let explainKeys = try Self.tableKeys("explain key")
        #expect(!explainKeys.isEmpty, "no `| explain key |` table in the docs")
        #expect(
            explainKeys.subtracting(explainPaths).isEmpty,
            "not printed: \(explainKeys.subtracting(explainPaths).sorted())")
        #expect(
            topLevel.subtracting(explainKeys).isEmpty, "not documented: \(topLevel.subtracting(explainKeys).sorted())")
    }
}
