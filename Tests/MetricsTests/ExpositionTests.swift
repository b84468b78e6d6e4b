import Metrics
import Testing

/// The Prometheus text format (0.0.4) as written by `Exposition`, computed by hand.
@Suite struct ExpositionTests {
    @Test func countersGaugesAndLabels() {
        let accepted = Counter()
        accepted.increment()
        accepted.increment(by: 41)
        let gauge = Gauge()
        gauge.set(10)
        gauge.add(-3)
        var out = Exposition()
        out.counter("x_total", help: "Lines.\nTwo \\ lines.", label: "status", [("a\"b", accepted.current), ("c", 0)])
        out.gauge("x_open", help: "Open.", gauge.current)
        #expect(
            out.text == """
                # HELP x_total Lines.\\nTwo \\\\ lines.
                # TYPE x_total counter
                x_total{status="a\\"b"} 42
                x_total{status="c"} 0
                # HELP x_open Open.
                # TYPE x_open gauge
                x_open 7

                """)
    }

    @Test func histogramBucketsAreCumulativeAndSecondsExact() {
        let histogram = Histogram(bounds: [100, 1_000, 250_000], scale: 1_000_000)
        for value: UInt64 in [0, 100, 101, 999, 1_000, 1_001, 300_000] { histogram.observe(value) }
        var out = Exposition()
        out.histogram("h_seconds", help: "H.", histogram)
        #expect(
            out.text == """
                # HELP h_seconds H.
                # TYPE h_seconds histogram
                h_seconds_bucket{le="0.0001"} 2
                h_seconds_bucket{le="0.001"} 5
                h_seconds_bucket{le="0.25"} 6
                h_seconds_bucket{le="+Inf"} 7
                h_seconds_sum 0.303201
                h_seconds_count 7

                """)
    }

    @Test func countsAreSafeAcrossThreads() async {
        let counter = Counter()
        let histogram = Histogram(bounds: [10])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for value in 0..<10_000 {
                        counter.increment()
                        histogram.observe(UInt64(value % 20))
                    }
                }
            }
        }
        #expect(counter.current == 80_000)
        let snapshot = histogram.snapshot()
        #expect(snapshot.count == 80_000 && snapshot.cumulative == [44_000, 80_000])
    }
}
