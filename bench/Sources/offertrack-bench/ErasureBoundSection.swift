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
        erasureAfterSeconds: 6, trafficSeconds: 24)

    static let smoke = ErasureBoundScale(
        journalRecords: 30_000, personRecords: 10_000, loads: [(0, 0), (200, 1), (2_000, 2)],
        erasureAfterSeconds: 0.6, trafficSeconds: 3)
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
        // The copy written back first: its dirty pages would otherwise land in the daemon's first fsync.
        FileSystem.syncAll()
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
            timing = try erase(erasureID, daemon: daemon, files: files)
        } else {
            let count = Int(rate * scale.trafficSeconds)
            let traffic = Workload(count: count, seed: 47, start: ErasureSection.trafficStart)
            others = try AckLatency.samples(
                traffic.submissions[...], recordsPerSecond: rate, clients: clients, socketPath: daemon.socketPath
            ) { start in
                Stopwatch.sleep(until: start + UInt64(scale.erasureAfterSeconds * 1e9))
                timing = try erase(erasureID, daemon: daemon, files: files)
            }
        }
        let renamed = try ErasureSection.records(of: Erasure.name(erasureID: erasureID), in: path)
        guard renamed == scale.personRecords + 1 else {
            throw BenchFailure("the erasure renamed \(renamed) records, not \(scale.personRecords + 1)")
        }
        let trafficEnd = others.map { $0.sentAt }.max() ?? 0
        let until = timing.gone > 0 ? timing.gone : timing.renamed
        let meanwhile = others.filter { $0.sentAt >= timing.sent && $0.sentAt <= until }.map(\.latency).sorted()
        let load =
            rate == 0
            ? "no other traffic"
            : "\(Format.grouped(rate)) records/s paced over \(clients) connection\(clients == 1 ? "" : "s")"
        // The same traffic's answers in the seconds before the erasure, past its first third (the daemon's first
        // seconds under it are slower): the baseline of the same run.
        let settled = (others.map(\.sentAt).min() ?? 0) + UInt64(scale.erasureAfterSeconds / 3 * 1e9)
        let before = others.filter { $0.sentAt >= settled && $0.sentAt < timing.sent }.map(\.latency).sorted()
        func summary(_ sorted: [UInt64]) -> String {
            "p99 \(Format.fixed(Percentile.of(sorted, 0.99), 2)) ms, max \(Format.fixed(Double(sorted.last ?? 0) / 1e6, 2)) ms"
        }
        let othersText =
            meanwhile.isEmpty
            ? ""
            : "; other answers meanwhile (\(Format.grouped(Double(meanwhile.count)))): \(summary(meanwhile)); "
                + "before the erasure (\(Format.grouped(Double(before.count)))): \(summary(before))"
        let beyond = rate > 0 && until > trafficEnd ? " (the traffic had ended by then)" : ""
        let gone =
            timing.gone > 0
            ? "id in no file by \(Format.fixed(timing.goneMilliseconds, 0)) ms"
            : "\(timing.copiesLeft) cop\(timing.copiesLeft == 1 ? "y" : "ies") of the id left in unused page "
                + "space \(Format.fixed(Self.giveUpSeconds, 0)) s after"
        context.add(
            ResultRow(
                section: ErasureSection.section,
                name: "erasure of a person with \(Format.grouped(Double(scale.personRecords))) records in a "
                    + "\(Format.grouped(Double(scale.journalRecords)))-record journal, \(load): its answer; its "
                    + "rename done; the person's id in no file",
                value: "answered in \(Format.fixed(timing.answeredMilliseconds, 1)) ms; renamed by "
                    + "\(Format.fixed(timing.renamedMilliseconds, 0)) ms; \(gone)\(beyond)",
                comparison: "target: answer ≤ 2,000 ms, rename and id gone well within 60 s; files searched every "
                    + "~\(Format.fixed(timing.searchMilliseconds * 2, 0)) ms\(othersText)"))
    }

    /// When the erasure was sent, answered, its rename done (the daemon's log line) and its person's id last seen
    /// in `files` (`Stopwatch` ns); how many copies of the id were left when the search gave up.
    private struct Timing {
        var sent: UInt64 = 0
        var answered: UInt64 = 0
        var renamed: UInt64 = 0
        var gone: UInt64 = 0
        var copiesLeft = 0
        /// How long one search of the files took (the longest).
        var searchMilliseconds = 0.0

        var answeredMilliseconds: Double { Double(answered &- sent) / 1e6 }
        var renamedMilliseconds: Double { Double(renamed &- sent) / 1e6 }
        var goneMilliseconds: Double { Double(gone &- sent) / 1e6 }
    }

    /// Sends the erasure, waits for its answer and for the daemon's log line that its rename is done (a person
    /// renamed in the erasure's batch has none), then searches `files` for the person's id, pausing as long as each
    /// search took after it (so that the search takes at most half a core from the daemon), until a search finds it
    /// nowhere (`gone` is when that search ended) or, `giveUpSeconds` after the rename, counts what is left.
    private func erase(_ id: String, daemon: DaemonProcess, files: [String]) throws -> Timing {
        var timing = Timing()
        let client = try PipelinedClient(
            socketPath: daemon.socketPath,
            records: [try ErasureSection.erasure(id: id, user: HotUserStream.user)][...])
        timing.sent = Stopwatch.now()
        for worker in client.start() { worker.join() }
        try client.check()
        timing.answered = client.finishedAt
        while !daemon.log.contains(Self.renameDone) {
            guard Double(Stopwatch.now() - timing.sent) / 1e9 < 300 else {
                throw BenchFailure("offertrackd did not log \"\(Self.renameDone)\" in 300 s:\n\(daemon.log)")
            }
            Stopwatch.sleep(seconds: 0.002)
        }
        timing.renamed = Stopwatch.now()
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
            if Double(ended - timing.renamed) / 1e9 > Self.giveUpSeconds {
                timing.copiesLeft = try FileBytes.count(needle, in: files)
                return timing
            }
            Stopwatch.sleep(until: ended + (ended - started))
        }
    }

    /// The daemon's log line once an erasure's chunks are done (`ErasureRenameChunks`).
    static let renameDone = "an erasure's rename is done"
    /// How long after the rename the search goes on before it counts the copies left (SPEC 11 allows 60 s; the
    /// `TRUNCATE` after the last chunk takes well under a second).
    static let giveUpSeconds = 10.0
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

    /// How many times `needle` occurs in `paths` (those that exist).
    static func count(_ needle: [UInt8], in paths: [String]) throws -> Int {
        var total = 0
        for path in paths where FileManager.default.fileExists(atPath: path) {
            guard let bytes = FileSystem.readFile(path) else { continue }
            total += bytes.withUnsafeBytes { occurrences(of: needle, in: $0) }
        }
        return total
    }

    private static func occurrences(of needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int {
        var count = 0
        var rest = bytes[...]
        while let offset = firstOffset(of: needle, in: UnsafeRawBufferPointer(rebasing: rest)) {
            count += 1
            rest = rest.dropFirst(offset + 1)
        }
        return count
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

    /// Whether `bytes` holds `needle`.
    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        firstOffset(of: needle, in: bytes) != nil
    }

    /// Where `needle` (not empty) first occurs in `bytes`: each place of its first byte (`memchr`) compared whole.
    private static func firstOffset(of needle: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let base = bytes.baseAddress, !needle.isEmpty, bytes.count >= needle.count else { return nil }
        return needle.withUnsafeBytes { wantedBytes -> Int? in
            guard let wanted = wantedBytes.baseAddress else { return nil }
            let last = bytes.count - needle.count
            var offset = 0
            while offset <= last {
                guard let hit = memchr(base + offset, Int32(needle[0]), last - offset + 1) else { return nil }
                let at = UnsafeRawPointer(hit) - base
                if memcmp(hit, wanted, needle.count) == 0 { return at }
                offset = at + 1
            }
            return nil
        }
    }
}
