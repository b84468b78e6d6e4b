import Foundation
import OfferTrackDomain
import Posix
import SQLite
import TestSupport

/// The smaller sections: queries, the export stall, payouts, the metrics scrape, the flood probe, one busy user,
/// the fleet, JSON.
extension BenchRun {
    func measureQueries() throws {
        let cli = options.resolvedCLIPath
        let path = newDatabase()
        progress("queries: building a \(Format.grouped(Double(scale.queryRecords)))-record journal")
        _ = try BigJournal.build(path: path, count: scale.queryRecords) { _ in }
        let rulesPath = scratch.file("holding-rules.json")
        for row in try QueryCost.reportRows(cli: cli, path: path, rulesPath: rulesPath, records: scale.queryRecords) {
            add(row)
        }
        scratch.removeDatabase(path)
        progress("queries: one busy day of \(Format.grouped(Double(scale.busyDayUsers))) users, then its export")
        let (row, milliseconds, rows) = try QueryCost.exportRow(cli: cli, scratch: scratch, users: scale.busyDayUsers)
        add(row)
        busyDayExport = (milliseconds, rows)
    }

    func measureExportStall() throws {
        let plan = scale.exportStall
        progress(
            "exportstall: a busy day of \(Format.grouped(Double(scale.busyDayUsers))) users exported while "
                + "\(Format.grouped(plan.recordsPerSecond)) records/s are offered by \(plan.clients) clients")
        let result = try ExportStall.measure(
            cli: options.resolvedCLIPath, scratch: scratch, busyDayUsers: scale.busyDayUsers, plan: plan
        ) { path, arguments in
            try self.startDaemon(label: "exportstall", databasePath: path, arguments: arguments)
        }
        exportStall = result
        add(ExportStall.row(result, plan: plan))
    }

    func measurePayouts() throws {
        progress("payouts: a month of \(Format.grouped(Double(scale.payoutMonthRows))) export rows, then its statement")
        add(try QueryCost.payoutsRow(cli: options.resolvedCLIPath, scratch: scratch, rows: scale.payoutMonthRows))
    }

    /// Acknowledgement latency at the middle load with the metrics endpoint on, without and with a scraper
    /// (alternating pairs, same daemon): what serving scrapes costs.
    func measureScrapeCost(_ workload: Workload, offset start: Int) throws {
        let load = scale.latencyLoads[min(1, scale.latencyLoads.count - 1)]
        let count = scale.latencyRecords[min(1, scale.latencyRecords.count - 1)]
        progress("scrape cost: \(Format.grouped(load)) records/s with and without /metrics scraped every 20 ms")
        var without: [Double] = []
        var with: [Double] = []
        var scrapes = 0
        var offset = start
        for pair in 0..<3 {
            for scraped in pair % 2 == 0 ? [false, true] : [true, false] {
                // A new daemon and journal each run (the workload's records are each sent once per journal).
                if offset + count > workload.count { offset = 0 }
                let port = try LoopbackHTTP.freePort()
                let daemon = try startDaemon(
                    label: "scrape-\(pair)-\(scraped)", databasePath: newDatabase(),
                    arguments: ["--metrics-listen", "127.0.0.1:\(port)"])
                let scraper = scraped ? ScrapeCost.Scraper(port: port, interval: 0.02) : nil
                let result = try AckLatency.measure(
                    workload.submissions[offset..<(offset + count)], recordsPerSecond: load,
                    clients: scale.latencyClients, socketPath: daemon.socketPath)
                offset += count
                scrapes += scraper?.stop() ?? 0
                try daemon.stop()
                if scraped { with.append(result.p99Milliseconds) } else { without.append(result.p99Milliseconds) }
            }
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        add(
            ResultRow(
                section: "2 offertrackd",
                name: "ack latency p99 at \(Format.grouped(load)) records/s while `/metrics` is scraped every 20 ms",
                value: "\(Format.fixed(median(with), 2)) ms",
                comparison: "\(Format.ratio(median(with) / max(0.001, median(without)))) of the same load unscraped "
                    + "(\(Format.fixed(median(without), 2)) ms; medians of 3 alternating runs, \(scrapes) scrapes)"))
    }

    func measureFloodProbe(_ workload: Workload) throws {
        let clients = 8
        progress("flood: one record every 20 ms beside \(clients) pipelining clients")
        let daemon = try startDaemon(label: "flood", databasePath: newDatabase())
        let result = try FloodProbe.measure(workload, clients: clients, socketPath: daemon.socketPath)
        try daemon.stop()
        floodProbe = result
        add(
            ResultRow(
                section: "2 offertrackd",
                name: "a single record's latency p50 / p99 / max beside \(clients) pipelining clients",
                value: "\(Format.fixed(result.p50Milliseconds, 2)) / \(Format.fixed(result.p99Milliseconds, 2)) / "
                    + "\(Format.fixed(result.maxMilliseconds, 2)) ms",
                comparison:
                    "\(result.samples) samples; unloaded p50 \(Format.fixed(result.unloadedP50Milliseconds, 2)) ms; "
                    + "the flood ran at \(Format.grouped(result.floodPerSecond)) records/s"))
    }

    /// Section 8: one very busy user (`HotUserSection`).
    func measureHotUsers() throws {
        var hotScale = scale.hot
        if let histories = options.hotHistories { hotScale.histories = histories }
        hotUsers = try HotUserSection(context: sectionContext, scale: hotScale).run()
    }

    /// Section 10: a returning record against the journal's size (`JournalSizeSection`).
    func measureJournalSize() throws {
        try JournalSizeSection(context: sectionContext, scale: scale.journalSize).run()
    }

    /// Section 10, issue 47: the same returning records after 100,000 and 10,000,000 records of the same users,
    /// beside SQLite in C (`JournalGrowthSection`).
    func measureJournalGrowth() throws {
        var growthScale = options.smoke ? JournalGrowthScale.smoke : .full
        if let journals = options.growthJournals { growthScale.journals = journals }
        try JournalGrowthSection(
            context: sectionContext, scale: growthScale, peers: options.peersPath, keep: options.growthKeep
        ).run()
    }

    /// Section 9: forgetting a person (`ErasureSection`).
    func measureErasure() throws {
        try ErasureSection(context: sectionContext, scale: options.smoke ? .smoke : .full).run()
    }

    /// Section 9, issue 47: an erasure's answer and its bytes gone, with no other traffic, light and heavy
    /// (`ErasureBoundSection`).
    func measureErasureBound() throws {
        try ErasureBoundSection(context: sectionContext, scale: options.smoke ? .smoke : .full).run()
    }

    /// Section 11, SPEC 12 (issue 47 items 2 and 5): a big day sealed beside paced traffic, and a steady flow sealed
    /// nightly (`SealingSection`).
    func measureSealing() throws {
        var sealingScale = options.smoke ? SealingScale.smoke : SealingScale.full
        if let rate = options.sealingRate { sealingScale.recordsPerSecond = rate }
        sealingScale.timelinePath = options.sealingTimeline
        try SealingSection(context: sectionContext, scale: sealingScale, cli: options.resolvedCLIPath).run(
            parts: options.sealingParts)
    }

    /// Section 7: the fleet over a real three-node JetStream cluster (`FleetSection`).
    func measureFleet() throws {
        var fleetScale = options.smoke ? FleetScale.smoke : FleetScale.full
        if let seconds = options.fleetOutageSeconds { fleetScale.outageSeconds = seconds }
        if let records = options.fleetRecords {
            fleetScale.throughputRecords = records
            fleetScale.throughputUsers = max(1, records / 6)
        }
        if let rounds = options.fleetRounds { fleetScale.pairs = rounds }
        if let rate = options.fleetLagRate { fleetScale.lagRate = rate }
        if let seconds = options.fleetLagSeconds { fleetScale.lagSeconds = seconds }
        try FleetSection(
            daemonPath: options.resolvedDaemonPath, cliPath: options.resolvedCLIPath, scratch: scratch,
            scale: fleetScale,
            newDatabase: { self.newDatabase() }, add: { self.add($0) }, progress: { self.progress($0) }
        ).run(parts: options.fleetParts)
    }

    func measureJSON(_ workload: Workload) throws {
        progress("JSON: RecordValidator.validate and JSONDecoder")
        let validator = try JSONCost.validatorNanoseconds(workload, passes: scale.jsonPasses)
        let decoder = try JSONCost.decoderNanoseconds(workload, passes: scale.jsonPasses)
        add(
            ResultRow(
                section: "3 JSON", name: "`RecordValidator.validate` (parse + validate) per line",
                value: "\(Format.fixed(validator / 1000, 2)) µs",
                comparison: "\(Format.ratio(validator / decoder)) the cost of `JSONDecoder` "
                    + "(\(Format.ratio(decoder / validator)) faster)"))
        add(
            ResultRow(
                section: "3 JSON", name: "Foundation `JSONDecoder` into a `Codable` struct, per line",
                value: "\(Format.fixed(decoder / 1000, 2)) µs", comparison: "reused decoder"))
    }
}
