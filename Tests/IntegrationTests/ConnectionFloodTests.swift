import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// 2,000 simultaneous connections, more than `--max-connections` (1024) and more than the daemon's descriptors.
    @Suite struct ConnectionFloodTests {
        static let clients = 2000

        /// Opens `clients` connections, sends one record on each, then reads and closes them in order: those past
        /// the daemon's limit wait in the listen backlog and are served as earlier ones leave.
        /// `whileHeld` runs once every connection is open and has sent its record, before any is read.
        static func flood(_ daemon: DaemonProcess, prefix: String, whileHeld: () -> Void = {}) throws -> [Answer] {
            let wanted = UInt64(clients + 256)
            try #require(ResourceLimits.raiseOpenFiles(to: wanted) >= wanted, "cannot open \(clients) sockets")
            var connections: [LineClient?] = []
            for index in 0..<clients {
                let client = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 20)
                try client.send(TestRecords.capabilities(id: "\(prefix)-\(index)", user: "u-\(index % 97)") + "\n")
                connections.append(client)
            }
            whileHeld()
            var answers: [Answer] = []
            for index in connections.indices {
                let answer = connections[index]?.readAnswer()
                #expect(answer?.status == "accepted" && answer?.id == "\(prefix)-\(index)", "\(answer?.raw ?? "none")")
                if let answer { answers.append(answer) }
                connections[index] = nil  // closed: a waiting client takes its place
            }
            #expect(answers.count == clients)
            let acceptFailures = daemon.stderr.components(separatedBy: "accept failed").count - 1
            #expect(acceptFailures <= 2, "accept errors are logged without rate limit: \(daemon.stderr.prefix(300))")
            return answers
        }

        @Test func twoThousandConnectionsAreAllServedWhileTheLimitHolds() throws {
            try AttackHarness.run { daemon in try Self.flood(daemon, prefix: "many") }
        }

        /// Under systemd the soft descriptor limit is 1024 by default: the daemon raises it to serve 1024 peers.
        @Test func theDaemonRaisesASoftDescriptorLimitOf1024() throws {
            try AttackHarness.run(launcher: ["/usr/bin/prlimit", "--nofile=1024:8192", "--"]) { daemon in
                try Self.flood(daemon, prefix: "soft")
            }
        }

        /// Out of descriptors (`EMFILE`): accepting pauses instead of spinning, and resumes as connections close.
        @Test func runningOutOfDescriptorsPausesAcceptingWithoutSpinning() throws {
            try AttackHarness.run { daemon in
                let lowered = try Shell.run("/usr/bin/prlimit", ["--pid", "\(daemon.pid)", "--nofile=128:128"])
                try #require(lowered.status == 0, "prlimit failed: \(lowered.output)")
                return try Self.flood(daemon, prefix: "emfile") {
                    // Nothing to do but wait for descriptors: a daemon retrying accept in a loop burns as much CPU
                    // as a spinning thread gets on this machine now (the baseline, measured in the same second).
                    let cpu = ProcessStatus(pid: daemon.pid).cpuBesideASpinner(seconds: 1)
                    print("out of descriptors: the daemon used \(cpu.used) s of CPU in 1 s, a spinner \(cpu.spinner) s")
                    #expect(
                        cpu.used < cpu.spinner / 4,
                        "the daemon used \(cpu.used) s of CPU in 1 s while out of descriptors (a spinner \(cpu.spinner) s)"
                    )
                }
            }
        }
    }
}
