import Foundation

/// The command line of `offertrack-bench`.
struct BenchOptions {
    /// Every measurement tiny (a few hundred records, a few clients): checks the harness still works.
    var smoke = false
    /// Also build a 10M-record journal and time the daemon's start on it.
    var big = false
    /// Records in the `--big` journal.
    var bigRecords = 10_000_000
    /// The `offertrackd` binary; by default the one beside this executable.
    var daemonPath: String?
    /// Also write the report to this file.
    var outputPath: String?
    /// The folder with the compiled peers (`sqlite-baseline`, `postgres-peer`, `run-postgres-peer`); nil: the
    /// returning-user section measures offertrackd alone.
    var peersPath: String?
    /// Measure only these sections (`baseline`, `ingest`, `latency`, `flood`, `exportstall`, `returning`, `heavy`,
    /// `journalsize`, `growth`, `erasure`, `erasurebound`, `sealing`, `json`, `big`, `payouts`, `queries`,
    /// `fleet`); nil: all.
    var only: Set<String>?
    /// How long the fleet section's stream outage lasts (seconds); nil: its scale's (600 s, smoke 1.5 s).
    var fleetOutageSeconds: Double?
    /// The parts of the fleet section to run (`throughput`, `lag`, `outage`); nil: all.
    var fleetParts: Set<String>?
    /// The fleet throughput part's records (a sixth as many users) and rounds; nil: its scale's.
    var fleetRecords: Int?
    var fleetRounds: Int?
    /// The fleet lag part's load (records/s) and how long it lasts (seconds); nil: its scale's.
    var fleetLagRate: Double?
    var fleetLagSeconds: Double?
    /// The hot-user section's histories (records of the one user); nil: its scale's.
    var hotHistories: [Int]?
    /// The growth section's journal sizes (records of the same users); nil: its scale's.
    var growthJournals: [Int]?
    /// A folder where the growth section keeps its filled journals and reuses them when they match; nil: none.
    var growthKeep: String?
    /// The sealing section's paced records/s beside the seal, and its parts (`seal`, `control`, `plateau`); nil:
    /// its scale's, all.
    var sealingRate: Double?
    var sealingParts: Set<String>?
    /// A file for the seal's answers second by second (answers, max ms, over 250 ms); nil: none.
    var sealingTimeline: String?

    /// Sections a full run leaves out unless `--only` names them (their fills take about half an hour); `--smoke` runs
    /// them too, tiny.
    static let namedOnly: Set<String> = ["growth"]

    /// Whether `section` is measured in this run.
    func measures(_ section: String) -> Bool { only?.contains(section) ?? (smoke || !Self.namedOnly.contains(section)) }

    static let usage = """
        usage: offertrack-bench [--smoke] [--big] [--big-records N] [--daemon PATH] [--output FILE]
          --smoke          run every measurement tiny (seconds), for CI
          --only LIST      measure only these sections: baseline,ingest,latency,flood,exportstall,returning,heavy,
                           journalsize,growth,erasure,erasurebound,sealing,json,big,queries,payouts,fleet
                           (growth only when named, or with --smoke)
          --fleet-outage-seconds N  the fleet section's stream outage (default 600; smoke 1.5)
          --fleet-parts LIST        only these parts of the fleet section: throughput,lag,outage
          --fleet-records N         the fleet throughput part's records (default 300000; smoke 1500)
          --fleet-rounds N          its rounds of alternating runs (default 3; smoke 1)
          --fleet-lag-rate N        the fleet lag part's records/s (default 10000; smoke 1000)
          --fleet-lag-seconds N     how long it offers them (default 60; smoke 1)
          --sealing-rate N          the sealing section's records/s beside the seal (default 10000; smoke 1000)
          --sealing-parts LIST      only these parts of the sealing section: seal,control,plateau (control: the
                                    same traffic with a sleep as long as the seal in its place)
          --sealing-timeline FILE   write the seal's answers second by second to FILE (tab-separated)
          --hot-histories LIST      the heavy section's histories of one user, in records
                                    (default 10,1000,100000,1000000; smoke 10,1000)
          --growth-journals LIST    the growth section's journal sizes, records of the same users
                                    (default 100000,10000000; smoke 600,6000)
          --growth-keep DIR         keep the growth section's filled journals in DIR, and reuse the ones there
                                    (the 10,000,000-record fill takes 10–30 minutes; empty DIR after a change
                                    to the simulator or the schema)
          --peers DIR      the compiled C baselines (scripts/bench builds them into .build/peers)
          --big            also time READY=1 on a journal of --big-records records (default 10000000)
          --daemon PATH    the offertrackd binary (default: beside this executable)
          --output FILE    also write the markdown report to FILE
        """

    /// Parses `arguments` (without the program name).
    static func parse(_ arguments: [String]) throws(BenchFailure) -> BenchOptions {
        var options = BenchOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--smoke": options.smoke = true
            case "--only":
                guard let list = remaining.popFirst() else { throw BenchFailure("--only needs sections\n\(usage)") }
                options.only = Set(list.split(separator: ",").map(String.init))
            case "--big": options.big = true
            case "--fleet-lag-rate", "--fleet-lag-seconds":
                guard let text = remaining.popFirst(), let value = Double(text), value > 0 else {
                    throw BenchFailure("\(argument) needs a positive number\n\(usage)")
                }
                if argument == "--fleet-lag-rate" {
                    options.fleetLagRate = value
                } else {
                    options.fleetLagSeconds = value
                }
            case "--sealing-rate":
                guard let text = remaining.popFirst(), let value = Double(text), value > 0 else {
                    throw BenchFailure("--sealing-rate needs a positive number\n\(usage)")
                }
                options.sealingRate = value
            case "--sealing-parts":
                guard let list = remaining.popFirst() else {
                    throw BenchFailure("--sealing-parts needs parts\n\(usage)")
                }
                options.sealingParts = Set(list.split(separator: ",").map(String.init))
            case "--sealing-timeline":
                guard let path = remaining.popFirst() else {
                    throw BenchFailure("--sealing-timeline needs a path\n\(usage)")
                }
                options.sealingTimeline = path
            case "--fleet-outage-seconds":
                guard let text = remaining.popFirst(), let seconds = Double(text), seconds > 0 else {
                    throw BenchFailure("--fleet-outage-seconds needs a positive number\n\(usage)")
                }
                options.fleetOutageSeconds = seconds
            case "--fleet-parts":
                guard let list = remaining.popFirst() else { throw BenchFailure("--fleet-parts needs parts\n\(usage)") }
                options.fleetParts = Set(list.split(separator: ",").map(String.init))
            case "--fleet-records", "--fleet-rounds":
                guard let text = remaining.popFirst(), let count = Int(text), count > 0 else {
                    throw BenchFailure("\(argument) needs a positive integer\n\(usage)")
                }
                if argument == "--fleet-records" { options.fleetRecords = count } else { options.fleetRounds = count }
            case "--hot-histories", "--growth-journals":
                guard let list = remaining.popFirst() else {
                    throw BenchFailure("\(argument) needs record counts\n\(usage)")
                }
                let counts = list.split(separator: ",").map { Int($0) }
                guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    throw BenchFailure("\(argument) needs positive integers, e.g. 10,1000\n\(usage)")
                }
                if argument == "--hot-histories" {
                    options.hotHistories = counts.compactMap { $0 }
                } else {
                    options.growthJournals = counts.compactMap { $0 }
                }
            case "--big-records":
                guard let text = remaining.popFirst(), let count = Int(text), count > 0 else {
                    throw BenchFailure("--big-records needs a positive integer\n\(usage)")
                }
                options.bigRecords = count
            case "--daemon":
                guard let path = remaining.popFirst() else { throw BenchFailure("--daemon needs a path\n\(usage)") }
                options.daemonPath = path
            case "--growth-keep":
                guard let path = remaining.popFirst() else {
                    throw BenchFailure("--growth-keep needs a folder\n\(usage)")
                }
                options.growthKeep = path
            case "--peers":
                guard let path = remaining.popFirst() else { throw BenchFailure("--peers needs a folder\n\(usage)") }
                options.peersPath = path
            case "--output":
                guard let path = remaining.popFirst() else { throw BenchFailure("--output needs a path\n\(usage)") }
                options.outputPath = path
            case "--help", "-h":
                throw BenchFailure(usage, exitCode: 0)
            default:
                throw BenchFailure("unknown argument \(argument)\n\(usage)")
            }
        }
        return options
    }

    /// The `offertrack` CLI: beside the daemon binary.
    var resolvedCLIPath: String {
        URL(fileURLWithPath: resolvedDaemonPath).deletingLastPathComponent().appendingPathComponent("offertrack").path
    }

    /// The daemon binary to run.
    var resolvedDaemonPath: String {
        if let daemonPath { return daemonPath }
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("offertrackd").path
    }
}
