import Foundation
import Posix

/// What serving `GET /metrics` costs the acknowledgements: the same paced load against a daemon with the metrics
/// endpoint, once without scrapes and once while a scraper fetches `/metrics` every 20 ms (hundreds of times a
/// usual 15 s scrape interval), alternating, in the same run.
enum ScrapeCost {
    /// A thread that scrapes `host:port` every `interval` seconds until stopped; counts the scrapes that worked.
    final class Scraper: @unchecked Sendable {
        private let lock = NSLock()
        private var running = true
        private var completed = 0
        private let thread: Thread

        init(port: UInt16, interval: TimeInterval) {
            let box = Box()
            thread = Thread {
                while box.scraper?.isRunning ?? true {
                    if Self.scrape(port: port) { box.scraper?.count() }
                    Thread.sleep(forTimeInterval: interval)
                }
            }
            box.scraper = self
            thread.start()
        }

        private final class Box: @unchecked Sendable { weak var scraper: Scraper? }

        var isRunning: Bool { lock.withLock { running } }
        private func count() { lock.withLock { completed += 1 } }

        /// Stops the thread; the number of complete scrapes.
        func stop() -> Int {
            lock.withLock { running = false }
            Thread.sleep(forTimeInterval: 0.1)
            return lock.withLock { completed }
        }

        /// One `GET /metrics`: true when a 200 with a body came back.
        static func scrape(port: UInt16) -> Bool {
            guard let response = LoopbackHTTP.get("/metrics", port: port) else { return false }
            return response.starts(with: Array("HTTP/1.1 200".utf8)) && response.count > 1000
        }
    }
}
