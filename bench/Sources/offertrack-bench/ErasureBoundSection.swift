import AttributionJoin
import Foundation
import JournalStore
import OfferTrackDomain
import Posix
import Simulator
import TestSupport

/// How big the erasure-bound part is: the full run, or `--smoke` (seconds).
struct ErasureBoundScale {
    /// Records in the journal, of which the person's (`HotUserStream.user`).
    var journalRecords: Int
    var personRecords: Int
    /// The other traffic beside each erasure: records/s over connections (0: none at all).
    var loads: [(recordsPerSecond: Double, clients: Int)]
    /// The erasure is sent this long into the traffic, which lasts `trafficSeconds` in all.
    var erasureAfterSeconds: Double
    var trafficSeconds: Double

    static let full = ErasureBoundScale(
        journalRecords: 1_000_000, personRecords: 100_000, loads: [(0, 0), (200, 1), (10_000, 8)],
        erasureAfterSeconds: 2, trafficSeconds: 14)

    static let smoke = ErasureBoundScale(
        journalRecords: 30_000, personRecords: 10_000, loads: [(0, 0), (200, 1), (2_000, 2)],
        erasureAfterSeconds: 0.3, trafficSeconds: 3)
}

/// Section 9, issue 47: erasure's own bound whatever the other traffic. One journal of `journalRecords` with one
/// person of `personRecords` (built in process, under the holding rules), copied for each load; the daemon started
/// on the copy, the load paced over its connections, and `erasureAfterSeconds` into it the person's erasure on a
/// connection of its own: how long until its answer, until the person's id is in neither the database nor its WAL
/// (both files searched for it, byte for byte, the search's own time and its pause after it being the
/// resolution), and the longest answer any other client waited meanwhile.
final class ErasureBoundSection {
    private let context: SectionContext
    private let scale: ErasureBoundScale

    init(context: SectionContext, scale: ErasureBoundScale) {
        self.context = context
        self.scale = scale
    }

    func run() throws {
        let journal = try buildJournal()
        for load in scale.loads {
            FileSystem.syncAll()
            try measure(journal: journal, recordsPerSecond: load.recordsPerSecond, clients: load.clients)
        }
        context.scratch.removeDatabase(journal)
    }

    /// The journal every load starts from, its WAL checkpointed into it.
    private func buildJournal() throws -> String {
        let path = context.newDatabase()
        let others = scale.journalRecords - scale.personRecords
        context.progress("erasure bound: building a journal of \(Format.grouped(Double(others))) records")
        _ = try BigJournal.build(path: path, count: others) { _ in }
        context.progress(
            "erasure bound: adding \(Format.grouped(Double(scale.personRecords))) records of \(HotUserStream.user)")
        let writer = try JournalWriter(
            path: path, durability: .normal, schema: .migrate, settings: QueryCost.holdingSettings)
        var person = HotUserStream()
        while person.produced < scale.personRecords {
            _ = try writer.append(try person.take(min(8_192, scale.personRecords - person.produced)), receivedAt: 0)
        }
        return path
    }

    private func measure(journal: String, recordsPerSecond rate: Double, clients: Int) throws {
        let path = context.newDatabase()
        try SectionContext.copyJournal(journal, to: path)
        let rulesPath = context.scratch.file("erasure-bound-rules.json")
        try QueryCost.writeHoldingRules(to: rulesPath)
        let label = "erasure-bound-\(Int(rate))"
        let daemon = try context.startDaemon(label, path, arguments: ["--rules", rulesPath])
        defer { try? daemon.stop() }
        _ = try daemon.waitForLog(containing: "the join knows every journaled user", timeoutSeconds: 600)
        let files = [path, path + "-wal"]
        guard try FileBytes.contain(Array(HotUserStream.user.utf8), in: files) else {
            throw BenchFailure("the journal holds no \(HotUserStream.user) before the erasure")
        }
        let erasureID = "bench-bound-\(Int(rate))"
        var timing = Timing()
        var others: [PacedClient.Sample] = []
        if rate == 0 {
            timing = try erase(erasureID, socket: daemon.socketPath, files: files)
        } else {
            let count = Int(rate * scale.trafficSeconds)
            let traffic = Workload(count: count, seed: 47, start: ErasureSection.trafficStart)
            others = try AckLatency.samples(
                traffic.submissions[...], recordsPerSecond: rate, clients: clients, socketPath: daemon.socketPath
            ) { start in
                Stopwatch.sleep(until: start + UInt64(scale.erasureAfterSeconds * 1e9))
                timing = try erase(erasureID, socket: daemon.socketPath, files: files)
            }
        }
        let renamed = try ErasureSection.records(of: Erasure.name(erasureID: erasureID), in: path)
        guard renamed == scale.personRecords + 1 else {
            throw BenchFailure("the erasure renamed \(renamed) records, not \(scale.personRecords + 1)")
        }
        let trafficEnd = others.map { $0.sentAt }.max() ?? 0
        let meanwhile = others.filter { $0.sentAt >= timing.sent && $0.sentAt <= timing.gone }.map(\.latency).sorted()
        let load =
            rate == 0
            ? "no other traffic"
            : "\(Format.grouped(rate)) records/s paced over \(clients) connection\(clients == 1 ? "" : "s")"
        let othersText =
            meanwhile.isEmpty
            ? ""
            : "; other answers meanwhile (\(Format.grouped(Double(meanwhile.count)))): p99 "
                + "\(Format.fixed(Percentile.of(meanwhile, 0.99), 2)) ms, max "
                + "\(Format.fixed(Double(meanwhile.last ?? 0) / 1e6, 2)) ms"
        let beyond = rate > 0 && timing.gone > trafficEnd ? " (the traffic had ended by then)" : ""
        context.add(
            ResultRow(
                section: ErasureSection.section,
                name: "erasure of a person with \(Format.grouped(Double(scale.personRecords))) records in a "
                    + "\(Format.grouped(Double(scale.journalRecords)))-record journal, \(load): its answer; "
                    + "the person's id in no file",
                value: "answered in \(Format.fixed(timing.answeredMilliseconds, 1)) ms; bytes gone by "
                    + "\(Format.fixed(timing.goneMilliseconds, 0)) ms\(beyond)",
                comparison: "target: answer ≤ 2,000 ms; id in neither file searched every "
                    + "~\(Format.fixed(timing.searchMilliseconds * 2, 0)) ms\(othersText)"))
    }

    /// When the erasure was sent, answered, and its person's id last seen in `files` (`Stopwatch` ns).
    private struct Timing {
        var sent: UInt64 = 0
        var answered: UInt64 = 0
        var gone: UInt64 = 0
        /// How long one search of the files took (the longest).
        var searchMilliseconds = 0.0

        var answeredMilliseconds: Double { Double(answered &- sent) / 1e6 }
        var goneMilliseconds: Double { Double(gone &- sent) / 1e6 }
    }

    /// Sends the erasure, waits for its answer, then searches `files` for the person's id, pausing as long as
    /// each search took after it (so that the search takes at most half a core from the daemon), until a search
    /// finds it nowhere; `gone` is when that search ended.
    private func erase(_ id: String, socket: String, files: [String]) throws -> Timing {
        var timing = Timing()
        let client = try PipelinedClient(
            socketPath: socket, records: [try ErasureSection.erasure(id: id, user: HotUserStream.user)][...])
        timing.sent = Stopwatch.now()
        for worker in client.start() { worker.join() }
        try client.check()
        timing.answered = client.finishedAt
        let needle = Array(HotUserStream.user.utf8)
        while true {
            let started = Stopwatch.now()
            let found = try FileBytes.contain(needle, in: files)
            let ended = Stopwatch.now()
            timing.searchMilliseconds = max(timing.searchMilliseconds, Double(ended - started) / 1e6)
            if !found {
                timing.gone = ended
                return timing
            }
            guard Double(ended - timing.sent) / 1e9 < 300 else {
                throw BenchFailure("\(HotUserStream.user) was still in the journal's files 300 s after the erasure")
            }
            Stopwatch.sleep(until: ended + (ended - started))
        }
    }
}

/// Searching files for bytes, as `grep -c` would, without reading them into memory whole.
enum FileBytes {
    /// Whether any of `paths` (those that exist) holds `needle`.
    static func contain(_ needle: [UInt8], in paths: [String]) throws -> Bool {
        for path in paths where FileManager.default.fileExists(atPath: path) {
            if try contains(needle, path: path) { return true }
        }
        return false
    }

    private static func contains(_ needle: [UInt8], path: String) throws -> Bool {
        let fd = FileSystem.openForReading(path)
        guard fd >= 0 else { return false }  // removed meanwhile (the WAL at a clean stop)
        defer { FileDescriptor.close(fd) }
        let size = 1 << 22
        var buffer = [UInt8](repeating: 0, count: size + needle.count)
        var kept = 0
        while true {
            let read = try buffer.withUnsafeMutableBytes { bytes in
                try FileDescriptor.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[kept..<(kept + size)]))
            }
            guard case .transferred(let count) = read, count > 0 else { return false }
            let filled = kept + count
            if buffer.withUnsafeBytes({ find(needle, in: UnsafeRawBufferPointer(rebasing: $0[..<filled])) }) {
                return true
            }
            // The last bytes go first in the buffer, so that a needle across two reads is found.
            kept = min(needle.count - 1, filled)
            for index in 0..<kept { buffer[index] = buffer[filled - kept + index] }
        }
    }

    /// Whether `bytes` holds `needle` (not empty): each place of its first byte (`memchr`) compared whole.
    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, !needle.isEmpty, bytes.count >= needle.count else { return false }
        return needle.withUnsafeBytes { wantedBytes in
            guard let wanted = wantedBytes.baseAddress else { return false }
            let last = bytes.count - needle.count
            var offset = 0
            while offset <= last {
                guard let hit = memchr(base + offset, Int32(needle[0]), last - offset + 1) else { return false }
                if memcmp(hit, wanted, needle.count) == 0 { return true }
                offset = UnsafeRawPointer(hit) - base + 1
            }
            return false
        }
    }
}
