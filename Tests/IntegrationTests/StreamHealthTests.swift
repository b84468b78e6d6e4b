import Fleet
import Posix
import Synchronization
import Testing

/// `StreamHealth` (SPEC 10, no silent stall): a problem shows after three failures in a row of the same part, and
/// ends only when that part succeeds; another part's successes do not hide it.
@Suite struct StreamHealthTests {
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test func onePartitionsSuccessesDoNotHideAnothersFailingFetches() {
        let lines = Lines()
        let health = StreamHealth(what: "consuming", log: Logger { _, line in lines.append(line) })
        for _ in 0..<3 {
            health.failed("fetching partition 1 failed: timeout", part: "partition 1")
            health.succeeded(part: "partition 0")
        }
        #expect(!health.isUp)
        #expect(health.state.problem == "fetching partition 1 failed: timeout")
        #expect(health.state.failuresInRow == 3)
        #expect(lines.all == ["STREAM DOWN, consuming: fetching partition 1 failed: timeout"])
        // The whole's success (a bind) does not end a partition's problem either; the partition's own does.
        health.succeeded()
        #expect(!health.isUp)
        health.succeeded(part: "partition 1")
        #expect(health.isUp && health.state.failuresInRow == 0)
        #expect(lines.all.last == "stream up again, consuming (after: fetching partition 1 failed: timeout)")
    }

    @Test func twoFailingPartsAreBothShownAndTheStreamIsUpOnlyWhenBothRecover() {
        let health = StreamHealth(what: "consuming", log: .discard)
        for _ in 0..<3 {
            health.failed("b down", part: "partition 2")
            health.failed("a down", part: "partition 1")
        }
        #expect(health.state.problem == "a down; b down")
        health.succeeded(part: "partition 1")
        #expect(health.state.problem == "b down")
        health.succeeded(part: "partition 2")
        #expect(health.isUp)
    }

    @Test func failuresInterruptedBySuccessesOfTheSamePartShowNothing() {
        let health = StreamHealth(what: "forwarding", log: .discard)
        for _ in 0..<5 {
            health.failed("slow")
            health.failed("slow")
            health.succeeded()
        }
        #expect(health.isUp)
        health.failed("refused", immediate: true)
        #expect(health.state.problem == "refused")
    }
}
