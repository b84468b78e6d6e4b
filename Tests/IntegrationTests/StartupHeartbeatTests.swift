import Foundation
import Posix
import TestSupport
import Testing

extension UnderAttack {
    /// A long start (the journal's `quick_check`, a migration) tells systemd what it does and asks for more time
    /// while it makes progress, and stops asking when it is stuck: reads of the journal slowed with
    /// `strace -e inject=pread64:delay_enter`, on a journal of a few thousand pages.
    @Suite(.serialized) struct StartupHeartbeatTests {
        /// A journal of about 3,000 pages: 20,000 records through the real daemon.
        static func journal(in directory: ScratchDirectory) throws -> String {
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { throw JournalSafetyFailure("no READY=1: \(daemon.stderr)") }
            let client = try LineClient(path: daemon.socketPath, receiveTimeoutSeconds: 60)
            let lines = TestRecords.stream(prefix: "heartbeat", count: 20_000)
            for start in stride(from: 0, to: lines.count, by: 2_000) {
                let answers = client.exchange(Array(lines[start..<min(start + 2_000, lines.count)]))
                #expect(answers.allSatisfy { $0.status == "accepted" })
            }
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
            return daemon.databasePath
        }

        /// The daemon under strace on a fresh journal, its reads of the journal delayed by `inject`, once it sent
        /// `READY=1` (nil when it did not: `waitReady` records why).
        static func startSlowed(_ inject: String, in directory: ScratchDirectory) throws -> TracedDaemon? {
            let path = try journal(in: directory)
            let traced = try TracedDaemon(in: directory, trace: "pread64", inject: inject, path: path)
            return traced.daemon.waitReady(timeout: 120) ? traced : nil
        }

        /// The messages the daemon sent before `READY=1`.
        static func beforeReady(_ messages: [String]) -> [String] {
            Array(messages.prefix { !$0.split(separator: "\n").contains("READY=1") })
        }

        @Test func aSlowStartSaysWhatItDoesAndAsksForMoreTime() throws {
            // Every read of the journal 2 ms late: the start's quick_check takes seconds, making progress.
            let directory = ScratchDirectory()
            guard let traced = try Self.startSlowed("pread64:delay_enter=2000", in: directory) else { return }
            let messages = traced.daemon.notify.messages
            let starting = Self.beforeReady(messages)
            print("slow start: \(starting.count) messages before READY=1: \(starting.prefix(4))")
            #expect(starting.contains("STATUS=starting: checking the journal (quick_check)"), "\(starting)")
            let extended = "EXTEND_TIMEOUT_USEC=30000000\nSTATUS=starting: checking the journal"
            #expect(
                starting.contains { $0.hasPrefix(extended) },
                "no extension was asked while the journal was checked: \(starting)")
            #expect(!starting.contains { $0.contains("no progress") }, "\(starting)")
            let afterReady = messages.dropFirst(starting.count)
            #expect(!afterReady.contains { $0.contains("STATUS=starting") }, "\(Array(afterReady))")
            #expect(traced.stop() == 0)
        }

        @Test func aStartStuckOnTheDiskStopsAskingForMoreTime() throws {
            // One read of the journal held for 15 s, as a hung disk would: no I/O and no CPU meanwhile.
            let directory = ScratchDirectory()
            guard let traced = try Self.startSlowed("pread64:delay_enter=15000000:when=100", in: directory) else {
                return
            }
            let starting = Self.beforeReady(traced.daemon.notify.messages)
            let stuck = starting.filter { $0.contains("no progress (disk stuck?)") }
            print("stuck start: \(stuck.count) looks without progress of \(starting.count) messages before READY=1")
            // The 15 s hold spans about seven 2 s looks (fewer on a loaded machine); none of them asks for more time.
            #expect(stuck.count >= 3, "\(starting)")
            // From the first look without progress to the last, no extension was asked, in any message.
            if let first = starting.firstIndex(where: { $0.contains("no progress") }),
                let last = starting.lastIndex(where: { $0.contains("no progress") })
            {
                let held = starting[first...last]
                #expect(!held.contains { $0.contains("EXTEND_TIMEOUT_USEC") }, "\(Array(held))")
            }
            let said = traced.daemon.stderr.components(separatedBy: "made no progress").count - 1
            #expect(said == 1, "the stall is logged once when it starts: \(traced.daemon.stderr)")
            #expect(traced.stop() == 0)
        }

        /// SIGTERM while the journal is checked (a `quick_check` slowed to seconds) stops the start at once: exit 0
        /// like any stop, a line naming what the start was doing, the socket file removed.
        @Test func aStopDuringTheJournalsCheckExitsZero() throws {
            let directory = ScratchDirectory()
            let path = try Self.journal(in: directory)
            let traced = try TracedDaemon(
                in: directory, trace: "pread64", inject: "pread64:delay_enter=2000", path: path)
            let checking = traced.daemon.notify.waitFor(timeout: 30) {
                $0.contains("STATUS=starting: checking the journal (quick_check)")
            }
            #expect(checking != nil, "\(traced.daemon.notify.messages)")
            let stopped = Date()
            #expect(traced.stop() == 0, "\(traced.daemon.stderr)")
            #expect(Date().timeIntervalSince(stopped) < 10)
            #expect(!traced.daemon.notify.messages.contains { $0.split(separator: "\n").contains("READY=1") })
            #expect(
                traced.daemon.stderr.contains(
                    "<5>offertrackd: stopped during the start, while checking the journal (quick_check)"),
                "\(traced.daemon.stderr)")
            #expect(!FileManager.default.fileExists(atPath: directory.file("offertrack.sock")))
        }
    }
}
