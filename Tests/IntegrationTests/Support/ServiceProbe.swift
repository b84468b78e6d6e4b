import Foundation
import Synchronization

/// A well-behaved client running beside an attack: one connection, one small record every `interval` seconds, each
/// exchange timed, an answer awaited up to `receiveTimeoutSeconds`. Connects before `init` returns, so it holds its
/// place even when the daemon is at its limit.
final class ServiceProbe: Sendable {
    /// What the probe saw.
    struct Report {
        var exchanges = 0
        var worstLatency: Duration = .zero
        var acknowledged: [Answer] = []
        var failures: [String] = []
    }

    private let stopping = Atomic<Bool>(false)
    private let done = Atomic<Bool>(false)
    private let report = Mutex(Report())

    init(socketPath: String, prefix: String = "probe", interval: TimeInterval = 0.1, receiveTimeoutSeconds: Int = 10)
        throws
    {
        let connected = Atomic<Int>(0)  // 1 connected, -1 failed
        Thread { [self] in
            defer { done.store(true, ordering: .sequentiallyConsistent) }
            guard let client = try? LineClient(path: socketPath, receiveTimeoutSeconds: receiveTimeoutSeconds) else {
                connected.store(-1, ordering: .sequentiallyConsistent)
                return
            }
            connected.store(1, ordering: .sequentiallyConsistent)
            run(client, prefix: prefix, interval: interval)
        }.start()
        while connected.load(ordering: .sequentiallyConsistent) == 0 { usleep(1000) }
        guard connected.load(ordering: .sequentiallyConsistent) == 1 else {
            throw ProbeError.cannotConnect(socketPath)
        }
    }

    private func run(_ client: LineClient, prefix: String, interval: TimeInterval) {
        let clock = ContinuousClock()
        var index = 0
        while !stopping.load(ordering: .sequentiallyConsistent) {
            let id = "\(prefix)-\(index)"
            index += 1
            let started = clock.now
            try? client.send(TestRecords.capabilities(id: id, user: "probe") + "\n")
            let answer = client.readAnswer()
            let latency = clock.now - started
            report.withLock { report in
                report.exchanges += 1
                report.worstLatency = max(report.worstLatency, latency)
                if let answer, answer.status == "accepted", answer.id == id {
                    report.acknowledged.append(answer)
                } else {
                    report.failures.append("\(id): \(answer?.raw ?? "no answer")")
                }
            }
            if answer == nil { return }
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// Waits until the probe has made `count` exchanges (or `timeout` seconds passed).
    func waitForExchanges(_ count: Int, timeout: TimeInterval) {
        let deadline = Date().addingTimeInterval(timeout)
        while report.withLock({ $0.exchanges }) < count && Date() < deadline { usleep(10_000) }
    }

    /// Stops the probe after its current exchange and returns what it saw.
    func stop() -> Report {
        stopping.store(true, ordering: .sequentiallyConsistent)
        while !done.load(ordering: .sequentiallyConsistent) { usleep(1000) }
        return report.withLock { $0 }
    }

    enum ProbeError: Error {
        case cannotConnect(String)
    }
}
