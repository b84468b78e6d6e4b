import Foundation
import JSON
import OfferTrackDomain
import Posix
import TestSupport
import Testing
import WireFormat

/// Programs run as `nobody` (uid and gid 65534) with `setpriv`, for the peer checks of SPEC section 8.
enum AsNobody {
    /// Runs `executable` as `nobody`, with `groups` as its supplementary groups (none when empty).
    static func run(_ executable: String, _ arguments: [String], groups: [UInt32] = []) throws -> Shell.Outcome {
        try Shell.run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534"]
                + (groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.map(String.init).joined(separator: ","))"])
                + [executable] + arguments,
            environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Sends `lines` one at a time on ONE connection as `nobody`, reading one answer after each; the answers, in
    /// order (fewer when the daemon closed the connection).
    static func exchange(socket: String, _ lines: [String], groups: [UInt32] = []) throws -> [Answer] {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            s.settimeout(10)
            f = s.makefile("rb")
            for line in sys.argv[2:]:
                try:
                    s.sendall(line.encode() + b"\\n")
                except OSError:
                    break
                answer = f.readline()
                if not answer:
                    break
                sys.stdout.write(answer.decode())
                sys.stdout.flush()
            """
        let outcome = try run("/usr/bin/python3", ["-c", script, socket] + lines, groups: groups)
        return outcome.output.split(separator: "\n").compactMap { Answer(String($0)) }
    }
}

/// Records of one converting user for the review tests: an eligible check, a presentation and a subscribed outcome.
enum ReviewRecords {
    /// `c-<name>`, `p-<name>` and `o-<name>` for user `u-<name>`: checked 10 min and shown 5 min before `ts`.
    static func conversion(_ name: String, at ts: Int64, affiliate: String?) -> [String] {
        let user = "u-\(name)"
        let token = affiliate.map { #","affiliateToken":"\#($0)""# } ?? ""
        return [
            #"{"type":"capabilities","id":"c-\#(name)","ts":"\#(Timestamp.format(ts - 600_000))","user":"\#(user)","authorization":"authorized","capabilities":2}"#,
            #"{"type":"offer.presented","id":"p-\#(name)","ts":"\#(Timestamp.format(ts - 300_000))","user":"\#(user)","offer":{"action":"subscribe"\#(token)}}"#,
            #"{"type":"subscription.outcome","id":"o-\#(name)","ts":"\#(Timestamp.format(ts))","user":"\#(user)","outcome":"subscribed","offerId":"p-\#(name)"}"#,
        ]
    }

    /// A `review` record of user `user` on conversion `conversion`.
    static func review(
        _ id: String, user: String, conversion: String, _ decision: String, reason: String? = nil, at ts: Int64
    ) -> String {
        let reason = reason.map { #","reason":"\#($0)""# } ?? ""
        return
            #"{"type":"review","id":"\#(id)","ts":"\#(Timestamp.format(ts))","user":"\#(user)","conversion":"\#(conversion)","decision":"\#(decision)"\#(reason)}"#
    }

    /// An authorized check without playback: a lapse record (rule 4.6).
    static func lapse(_ id: String, user: String, at ts: Int64) -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(Timestamp.format(ts))","user":"\#(user)","authorization":"authorized","capabilities":2}"#
    }
}

/// The commission files of one `--out` directory, read back.
enum ExportFiles {
    /// The data rows of `commissions-<day>.csv`.
    static func rows(_ out: String, day: String) throws -> [String] {
        let text = try String(contentsOfFile: "\(out)/commissions-\(day).csv", encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map(String.init)
    }

    /// The sum of `amount_minor` over every row of every commission file in `out` (the test's tokens hold no comma).
    static func totalAmount(_ out: String) throws -> Int64 {
        var total: Int64 = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: out)
        where name.hasPrefix("commissions-") && name.hasSuffix(".csv") {
            for row in try rows(out, day: String(name.dropFirst("commissions-".count).dropLast(".csv".count))) {
                let fields = row.split(separator: ",", omittingEmptySubsequences: false)
                guard fields.count == 12, let amount = Int64(fields[9]) else {
                    Issue.record("unexpected row in \(name): \(row)")
                    continue
                }
                total += amount
            }
        }
        return total
    }
}

/// Runs the freshly built CLI.
enum CLI {
    static func run(_ arguments: [String]) throws -> Shell.Outcome {
        try Shell.run(Binaries.cli, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }

    /// Runs the CLI, expects exit 0, returns its output.
    static func output(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let outcome = try run(arguments)
        #expect(outcome.status == 0, "offertrack \(arguments): \(outcome.output)", sourceLocation: sourceLocation)
        return outcome.output
    }

    /// The sum of one numeric key over the rows of `report --format json`.
    static func reportSum(_ key: String, _ arguments: [String]) throws -> Int64 {
        let text = try output(["report", "--format", "json"] + arguments)
        guard case .array(let rows) = try JSONParser.parse(Array(text.utf8)) else {
            Issue.record("report is not an array: \(text)")
            return -1
        }
        return rows.reduce(0) { sum, row in
            guard case .object(let object) = row, case .number(let number)? = object[key] else { return sum }
            return sum + (number.int64Value ?? 0)
        }
    }
}

/// A daemon in a scratch directory under a rules file the test writes, with an empty export directory `out`.
struct RulesDaemon {
    let directory = ScratchDirectory()
    let rules: String
    let out: String
    let daemon: DaemonProcess

    /// Writes `text` as the rules file and starts the daemon with it; nil (the test failed) when it is not ready.
    init?(rules text: String, arguments: [String] = []) throws {
        rules = directory.file("rules.json")
        out = directory.file("out")
        try text.write(toFile: rules, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        daemon = try DaemonProcess(in: directory, arguments: ["--rules", rules] + arguments)
        guard daemon.waitReady() else { return nil }
    }

    /// Replaces the rules file (the daemon reads it on SIGHUP; every CLI command at once).
    func write(rules text: String) throws { try text.write(toFile: rules, atomically: true, encoding: .utf8) }

    /// Stops the daemon with SIGTERM and expects exit 0.
    func stop(sourceLocation: SourceLocation = #_sourceLocation) {
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0, sourceLocation: sourceLocation)
    }
}
