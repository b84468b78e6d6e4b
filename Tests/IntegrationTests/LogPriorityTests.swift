import Foundation
import Posix
import Synchronization
import TestSupport
import Testing

extension UnderAttack {
    /// Every line the daemon writes to stderr carries an sd-daemon priority (`<3>` … `<7>`), which journald turns
    /// into the entry's priority: `journalctl -p err` must find a corrupt journal, not the routine lines.
    @Suite struct LogPriorityTests {
        /// The lines of `log` that mention `text`.
        static func lines(_ log: String, mentioning text: String) -> [Substring] {
            log.split(separator: "\n").filter { $0.contains(text) }
        }

        /// Damage found while running is logged at error (3); starting, stopping and stopped at info and notice.
        @Test func aCorruptJournalIsAnErrorAndRoutineLinesAreInfo() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory, count: 300)
            let daemon = try DaemonProcess(in: directory)
            guard daemon.waitReady() else { return }
            let page = try JournalDamage.rootPage(of: "sqlite_autoindex_records_1", in: path)
            try JournalDamage.overwrite(path, offset: UInt64(page - 1) * 4096, count: 4096)
            let answers = try LineClient(path: daemon.socketPath).exchange(TestRecords.stream(prefix: "x", count: 20))
            #expect(answers.allSatisfy { $0.code == "storage_unavailable" }, "\(answers.prefix(3))")
            daemon.signal(Signals.terminate)
            #expect(daemon.waitExit() == 0)
            let log = daemon.stderr
            let corrupt = Self.lines(log, mentioning: "JOURNAL CORRUPT")
            #expect(
                corrupt.count == 1 && corrupt.allSatisfy { $0.hasPrefix("<3>offertrackd: JOURNAL CORRUPT") }, "\(log)")
            let listening = Self.lines(log, mentioning: "listening on")
            #expect(
                listening.count == 1 && listening.allSatisfy { $0.hasPrefix("<6>offertrackd: listening on") }, "\(log)")
            #expect(Self.lines(log, mentioning: "quick_check of").allSatisfy { $0.hasPrefix("<6>") }, "\(log)")
            #expect(Self.lines(log, mentioning: "stopping:").allSatisfy { $0.hasPrefix("<5>") }, "\(log)")
            let stopped = Self.lines(log, mentioning: "stopped:")
            #expect(stopped.count == 1 && stopped.allSatisfy { $0.hasPrefix("<6>offertrackd: stopped:") }, "\(log)")
            DaemonLog.expectEveryLinePrefixed(log)
        }

        /// A start refused (here a damaged journal, exit 65) is an error, every line of it.
        @Test func aRefusedStartIsAnError() throws {
            let directory = ScratchDirectory()
            let path = try JournalDamage.journal(in: directory, count: 10)
            try JournalDamage.overwrite(path, offset: 0, count: 100)
            let daemon = try DaemonProcess(in: directory)
            #expect(daemon.waitExit(timeout: 10) == 65, "\(daemon.stderr)")
            let lines = daemon.stderr.split(separator: "\n")
            #expect(!lines.isEmpty && lines.allSatisfy { $0.hasPrefix("<3>offertrackd: ") }, "\(daemon.stderr)")
            #expect(daemon.stderr.contains("corrupt"), "\(daemon.stderr)")
        }
    }
}

/// The logger's own format: a prefix on every line of a message.
@Suite struct LoggerFormatTests {
    @Test func everyLineOfAMessageCarriesThePriority() {
        #expect(Logger.lines(.error, program: "offertrackd", "broken") == "<3>offertrackd: broken")
        #expect(Logger.lines(.warning, program: "p", "a\nb\n") == "<4>p: a\n<4>p: b")
        #expect(Logger.Priority.allCases.map(\.prefix) == ["<3>", "<4>", "<5>", "<6>", "<7>"])
    }

    @Test func aLoggerHandsEachMessageToItsSinkWithItsPriority() {
        let seen = Mutex<[(Logger.Priority, String)]>([])
        let log = Logger { priority, line in seen.withLock { $0.append((priority, line)) } }
        log.error("e")
        log.info("i")
        let got = seen.withLock { $0 }
        #expect(got.map(\.0) == [.error, .info] && got.map(\.1) == ["e", "i"])
    }
}
