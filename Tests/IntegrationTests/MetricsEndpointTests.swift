import Foundation
import Posix
import TestSupport
import Testing

/// `offertrackd --metrics-listen` (SPEC section 8) against real tools: `promtool check metrics` parses the
/// exposition, and a real Prometheus server scrapes the daemon and answers the accepted count through its API.
@Suite struct MetricsEndpointTests {
    /// Records that give 3 accepted, 1 duplicate, 1 invalid_json and 1 missing_field.
    static let lines = [
        TestRecords.capabilities(id: "m-1"), TestRecords.presented(id: "m-2"), TestRecords.capabilities(id: "m-3"),
        TestRecords.capabilities(id: "m-1"), "{not json", #"{"type":"capabilities","id":"m-4"}"#,
    ]

    @Test func theExpositionParsesAndCountsWhatWasAnswered() throws {
        let directory = ScratchDirectory()
        let port = try LoopbackPorts.ephemeral()
        let launched = Date().timeIntervalSince1970.rounded(.down)
        let daemon = try DaemonProcess(in: directory, arguments: ["--metrics-listen", "127.0.0.1:\(port)"])
        guard daemon.waitReady() else { return }
        let answers = try LineClient(path: daemon.socketPath).exchange(Self.lines)
        #expect(answers.map(\.status) == ["accepted", "accepted", "accepted", "duplicate", "rejected", "rejected"])
        let scrape = try Curl.run(["--include", "http://127.0.0.1:\(port)/metrics"])
        #expect(scrape.status == 0, "\(scrape.output)")
        #expect(scrape.output.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(scrape.output.contains("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
        let body = scrape.output.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        let file = directory.file("metrics.txt")
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try Shell.run("/bin/sh", ["-c", "/usr/bin/promtool check metrics < \(file)"])
        #expect(check.status == 0, "promtool: \(check.output)")
        #expect(MetricsScrape.value(body, #"offertrack_records_total{status="accepted"}"#) == "3")
        #expect(MetricsScrape.value(body, #"offertrack_records_total{status="duplicate"}"#) == "1")
        #expect(MetricsScrape.value(body, #"offertrack_records_total{status="rejected"}"#) == "2")
        #expect(MetricsScrape.value(body, #"offertrack_rejections_total{code="invalid_json"}"#) == "1")
        #expect(MetricsScrape.value(body, #"offertrack_rejections_total{code="missing_field"}"#) == "1")
        #expect(MetricsScrape.value(body, #"offertrack_ack_latency_seconds_count"#) == "4")
        #expect(MetricsScrape.value(body, "offertrack_last_seq") == "3")
        #expect(MetricsScrape.value(body, "offertrack_connections").flatMap(Int.init).map { $0 <= 1 } == true)
        #expect(MetricsScrape.value(body, "offertrack_journal_bytes").flatMap(Int.init).map { $0 > 0 } == true)
        #expect(MetricsScrape.value(body, "offertrack_journal_corrupt") == "0")
        #expect(MetricsScrape.value(body, "offertrack_checkpoint_failures_total") == "0")
        for name in [
            "offertrack_checkpoint_blocking_total", "offertrack_checkpoint_writer_pauses_total",
            "offertrack_checkpoint_erasure_truncates_total",
        ] {
            #expect(MetricsScrape.value(body, name) == "0", "\(name)")
        }
        #expect(MetricsScrape.value(body, "offertrack_checkpoint_writer_pause_seconds_total") == "0")
        let started = MetricsScrape.value(body, "offertrack_start_time_seconds").flatMap(Double.init) ?? 0
        #expect(started >= launched && started <= Date().timeIntervalSince1970, "start time \(started)")
        for path in ["summary", "late_check", "refreshed"] {
            let name = #"offertrack_join_groups_total{path="\#(path)"}"#
            #expect(MetricsScrape.value(body, name).flatMap(Int.init) != nil, "no \(name)")
        }
        for name in ["offertrack_queued_records", "offertrack_commit_seconds_count", "offertrack_commit_records_sum"] {
            #expect(MetricsScrape.value(body, name) != nil, "no \(name)")
        }
        // Every commit's COMMIT statement is timed too, and takes part of the commit's time; no pause yet.
        let commits = MetricsScrape.value(body, "offertrack_commit_seconds_count").flatMap(Int.init) ?? 0
        #expect(commits > 0)
        #expect(MetricsScrape.value(body, "offertrack_commit_statement_seconds_count").flatMap(Int.init) == commits)
        let statementSum = MetricsScrape.value(body, "offertrack_commit_statement_seconds_sum").flatMap(Double.init)
        let commitSum = MetricsScrape.value(body, "offertrack_commit_seconds_sum").flatMap(Double.init)
        #expect(statementSum.map { $0 > 0 } == true, "COMMIT statements took no time: \(body)")
        #expect(statementSum.flatMap { statement in commitSum.map { statement <= $0 } } == true, "\(body)")
        #expect(MetricsScrape.value(body, "offertrack_writer_pause_seconds_count") == "0")
        // Anything but GET /metrics is refused.
        #expect(try Curl.run(["--include", "http://127.0.0.1:\(port)/"]).output.hasPrefix("HTTP/1.1 404"))
        #expect(
            try Curl.run(["--include", "-X", "POST", "http://127.0.0.1:\(port)/metrics"]).output.hasPrefix(
                "HTTP/1.1 405"))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    @Test func aUnixSocketEndpointAndABadAddress() throws {
        let directory = ScratchDirectory()
        let path = directory.file("metrics.sock")
        let daemon = try DaemonProcess(in: directory, arguments: ["--metrics-listen", path])
        guard daemon.waitReady() else { return }
        let scrape = try Curl.run(["--unix-socket", path, "http://localhost/metrics"])
        #expect(scrape.status == 0 && scrape.output.contains("# TYPE offertrack_records_total counter"))
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
        let bad = try Shell.run(Binaries.daemon, ["--metrics-listen", "nowhere", "--db", directory.file("x.db")])
        #expect(bad.status == 64 && bad.output.contains("--metrics-listen"), "\(bad.output)")
    }

    @Test func aRealPrometheusScrapesTheAcceptedCount() throws {
        let directory = ScratchDirectory()
        let port = try LoopbackPorts.ephemeral()
        let daemon = try DaemonProcess(in: directory, arguments: ["--metrics-listen", "127.0.0.1:\(port)"])
        guard daemon.waitReady() else { return }
        _ = try LineClient(path: daemon.socketPath).exchange(Self.lines)
        let webPort = try LoopbackPorts.ephemeral()
        let config = directory.file("prometheus.yml")
        try """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        scrape_configs:
          - job_name: offertrack
            static_configs:
              - targets: ["127.0.0.1:\(port)"]
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let prometheus = try SpawnedProcess(
            [
                "/usr/bin/prometheus", "--config.file=\(config)", "--storage.tsdb.path=\(directory.file("tsdb"))",
                "--web.listen-address=127.0.0.1:\(webPort)", "--log.level=warn",
            ], environment: ["PATH": "/usr/bin:/bin"], stderrPath: directory.file("prometheus.log"))
        defer { kill(prometheus.pid, SIGTERM) }
        let query =
            "http://127.0.0.1:\(webPort)/api/v1/query?query=offertrack_records_total%7Bstatus%3D%22accepted%22%7D"
        let deadline = Date().addingTimeInterval(60)
        var answer = ""
        while Date() < deadline {
            answer = (try? Curl.run([query]).output) ?? ""
            if answer.contains(#""value":["#) { break }
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(answer.contains(#""job":"offertrack""#), "\(answer)")
        #expect(answer.hasSuffix(#","3"]}]}}"#), "Prometheus answered \(answer)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }

    /// Out of descriptors (`EMFILE`: the daemon's open-file limit lowered to its lowest free descriptor), a scrape
    /// waiting to be accepted leaves the endpoint's listener readable: the endpoint pauses accepting like the event
    /// loop's listener, using less than a quarter of the CPU a spinning thread gets in the same second (retrying
    /// at once it used as much), and serves the scrape once descriptors are back.
    @Test func outOfDescriptorsTheEndpointPausesInsteadOfSpinning() throws {
        let directory = ScratchDirectory()
        let port = try LoopbackPorts.ephemeral()
        let daemon = try DaemonProcess(in: directory, arguments: ["--metrics-listen", "127.0.0.1:\(port)"])
        guard daemon.waitReady() else { return }
        // The soft limit only: without CAP_SYS_RESOURCE a hard limit lowered cannot be raised again.
        let limits = try Shell.run(
            "/usr/bin/prlimit",
            ["--pid", "\(daemon.pid)", "--nofile", "--noheadings", "--raw", "--output", "SOFT,HARD"]
        ).output.split(whereSeparator: \.isWhitespace)
        try #require(limits.count == 2, "prlimit: \(limits)")
        let open = Set(
            try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").compactMap { Int($0) })
        let lowestFree = (0...).first { !open.contains($0) } ?? 0
        let lowered = try Shell.run(
            "/usr/bin/prlimit", ["--pid", "\(daemon.pid)", "--nofile=\(lowestFree):\(limits[1])"])
        try #require(lowered.status == 0, "prlimit failed: \(lowered.output)")
        let scrape = try TCPSocket.connect(host: "127.0.0.1", port: port)
        defer { FileDescriptor.close(scrape) }
        try FileDescriptor.writeAll(scrape, Array("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        Thread.sleep(forTimeInterval: 0.2)
        let cpu = ProcessStatus(pid: daemon.pid).cpuBesideASpinner(seconds: 1)
        print(
            "metrics endpoint out of descriptors: the daemon used \(cpu.used) s of CPU in 1 s, a spinner \(cpu.spinner) s"
        )
        #expect(
            cpu.used < cpu.spinner / 4,
            "the daemon used \(cpu.used) s of CPU in 1 s while out of descriptors (a spinner \(cpu.spinner) s)")
        let restored = try Shell.run(
            "/usr/bin/prlimit", ["--pid", "\(daemon.pid)", "--nofile=\(limits[0]):\(limits[1])"])
        try #require(restored.status == 0, "prlimit failed: \(restored.output)")
        UnixSocket.setReceiveTimeout(scrape, seconds: 5)
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case .transferred(let count)? = buffer.withUnsafeMutableBytes({
            try? FileDescriptor.read(scrape, into: $0)
        }),
            count > 0
        {
            response += buffer[0..<count]
        }
        #expect(
            String(decoding: response, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"),
            "no answer once descriptors were back")
        #expect(daemon.stderr.contains("metrics endpoint: accept failed"), "\(daemon.stderr)")
        daemon.signal(Signals.terminate)
        #expect(daemon.waitExit() == 0)
    }
}
