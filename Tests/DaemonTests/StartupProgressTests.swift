import Posix
import Testing

@testable import OfferTrackDaemon

/// When a starting daemon counts as making progress (and so asks systemd for more time), computed by hand from
/// the thresholds: more than 64 KiB of I/O or more than 50 ms of CPU between two looks.
@Suite struct StartupProgressTests {
    static let kib: UInt64 = 1024
    static let ms: UInt64 = 1_000_000

    /// (I/O bytes, CPU ns) added between looks, in order → progress at each look, and the look that said a stall.
    static let cases: [([(UInt64, UInt64)], [Bool], Int?)] = [
        ([(65 * kib, 0)], [true], nil),  // reading the journal
        ([(64 * kib, 0)], [false], 0),  // at the threshold: not more than it
        ([(0, 51 * ms)], [true], nil),  // CPU-bound work (a sort in the cache)
        ([(0, 50 * ms)], [false], 0),
        ([(300, 1 * ms)], [false], 0),  // only the heartbeat's own looking
        ([(1 << 20, 0), (0, 0), (0, 0), (1 << 20, 0)], [true, false, false, true], 1),  // a stall said once
        ([(0, 0), (1 << 20, 0), (0, 0)], [false, true, false], 0),  // two stalls: the last said again
    ]

    @Test(arguments: cases)
    func progressIsMoreThanTheHeartbeatsOwnLooking(added: [(UInt64, UInt64)], expected: [Bool], firstStall: Int?) {
        var activity = ProcessActivity(ioBytes: 1 << 30, cpuNanoseconds: 5_000 * Self.ms)
        var progress = StartupProgress(last: activity)
        var seen: [Bool] = []
        var stalls: [Int] = []
        for (index, (io, cpu)) in added.enumerated() {
            activity.ioBytes += io
            activity.cpuNanoseconds += cpu
            seen.append(progress.advance(to: activity))
            if progress.justStalled { stalls.append(index) }
        }
        #expect(seen == expected)
        #expect(stalls.first == firstStall)
    }

    @Test func twoStallsAreEachSaidOnce() {
        var activity = ProcessActivity(ioBytes: 0, cpuNanoseconds: 0)
        var progress = StartupProgress(last: activity)
        var stalls: [Int] = []
        for (index, io) in [UInt64(0), 0, 1 << 20, 0, 0].enumerated() {
            activity.ioBytes += io
            _ = progress.advance(to: activity)
            if progress.justStalled { stalls.append(index) }
        }
        #expect(stalls == [0, 3])
    }
}
