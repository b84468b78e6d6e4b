import TestSupport

/// A daemon's metrics read as Prometheus does: its exposition scraped, one sample's value read from it.
enum MetricsScrape {
    /// The value of `sample` (a name with its labels, if any) in `exposition`; nil when it has none.
    static func value(_ exposition: String, _ sample: String) -> String? {
        exposition.split(separator: "\n").first { $0.hasPrefix(sample + " ") }.map {
            String($0.dropFirst(sample.count + 1))
        }
    }

    /// A daemon's metric, read from its `--metrics-listen` socket.
    static func metric(_ name: String, at socket: String) -> String? {
        guard let scrape = try? Curl.run(["--unix-socket", socket, "http://localhost/metrics"]) else { return nil }
        return value(scrape.output, name)
    }

    /// A scrape of the metrics socket `m.sock` in `directory`.
    static func exposition(in directory: ScratchDirectory) throws -> String {
        try Curl.run(["--unix-socket", directory.file("m.sock"), "http://localhost/metrics"]).output
    }
}
