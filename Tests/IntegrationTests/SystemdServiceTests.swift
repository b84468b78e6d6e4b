import Foundation
import Posix
import TestSupport
import Testing

/// offertrackd run as offertrackd.socket and offertrackd.service run it, as far as a machine without systemd
/// as PID 1 allows: the unit's own ExecStart= flags, socket activation by systemd-socket-activate, and the
/// sandbox emulated by Tests/Tools/systemd-like-sandbox (namespaces, read-only mounts, an unprivileged uid
/// without capabilities, and the unit's seccomp filters with a stray system call killing the daemon).
@Suite(.serialized) struct SystemdServiceTests {
    /// Stand-ins: the service user `offertrack` is nobody; the writers group is a numeric gid.
    static let serviceUID: UInt32 = 65534
    static let serviceGID: UInt32 = 65534
    static let writersGID: UInt32 = 4242
    /// What sysusers.d's `offertrack-reviewers` group is here (no such group exists on the test machine).
    static let reviewersGID: UInt32 = 4243

    @Test func theServiceRunsWithItsOwnCommandLineInsideItsSandbox() throws {
        let directory = ScratchDirectory("ot-unit")
        let service = try UnitFile("offertrackd.service")
        let socketUnit = try UnitFile("offertrackd.socket")

        // The unit's command line, with this build's binary, the test's /etc and the stand-in group.
        let etc = directory.file("etc")
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        let rules = "\(etc)/rules.json"
        try FileManager.default.copyItem(atPath: Repository.file("systemd/rules.example.json"), toPath: rules)
        var command = try #require(service.command("ExecStart"))
        #expect(command.first == "/usr/bin/offertrackd")
        command[0] = Binaries.daemon
        command = command.map { word in
            if word == socketUnit.value("SocketGroup") { return "\(Self.writersGID)" }
            if word == "offertrack-reviewers" { return "\(Self.reviewersGID)" }
            return word.replacingOccurrences(of: "/etc/offertrack/", with: "\(etc)/")
        }
        #expect(command.contains("\(Self.reviewersGID)"), "the unit grants offertrack-reviewers: \(command)")
        #expect(!command.contains { $0.hasPrefix("/etc/") || $0.hasPrefix("/usr/bin/") }, "\(command)")

        // StateDirectory= (owned by the service user, StateDirectoryMode=), where the database defaults to.
        let state = directory.file("state")
        let stateMode = try #require(service.value("StateDirectoryMode").flatMap { mode_t($0, radix: 8) })
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chown(state, Self.serviceUID, Self.serviceGID) == 0 && chmod(state, stateMode) == 0)
        let unitCopy = directory.file("offertrackd.service")
        try service.text.write(toFile: unitCopy, atomically: true, encoding: .utf8)

        let notify = try NotifyListener(in: directory)
        chmod(notify.path, 0o777)  // like /run/systemd/notify: the service user must be able to send
        let socketPath = directory.file("offertrack.sock")
        let stderrPath = directory.file("daemon.log")
        // WatchdogSec= is 30 s in the unit; 2 s here so a ping arrives within the test.
        let process = try SpawnedProcess(
            ["/usr/bin/systemd-socket-activate", "-l", socketPath]
                + ["-E", "NOTIFY_SOCKET", "-E", "STATE_DIRECTORY", "-E", "WATCHDOG_USEC"]
                + ["/usr/bin/unshare", "-m", "-n", "-i", Repository.file("Tests/Tools/systemd-like-sandbox")]
                + [directory.path, state, "\(Self.serviceUID)", "\(Self.serviceGID)", "kill", unitCopy, "--"]
                + command,
            environment: ["NOTIFY_SOCKET": notify.path, "STATE_DIRECTORY": state, "WATCHDOG_USEC": "2000000"],
            stderrPath: stderrPath)
        func log() -> String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

        // SocketUser=, SocketGroup=, SocketMode= on the socket systemd would create (once it listens: the first
        // connection starts the daemon, which answers it).
        let root = try LineClient.connectWhenListening(path: socketPath)
        let socketMode = try #require(socketUnit.value("SocketMode").flatMap { mode_t($0, radix: 8) })
        #expect(chown(socketPath, Self.serviceUID, Self.writersGID) == 0 && chmod(socketPath, socketMode) == 0)

        let first = (1...3).map { TestRecords.capabilities(id: "unit-\($0)") }
        try #require(root.exchange(first).map(\.status) == ["accepted", "accepted", "accepted"], "\(log())")
        guard notify.waitFor(line: "READY=1") != nil else {
            Issue.record("no READY=1; stderr: \(log())")
            return
        }

        // Peers: writers as the primary group or as a supplementary one (`usermod -aG`, SO_PEERGROUPS) is
        // served; anyone else cannot connect at all.
        #expect(try Self.peer(socketPath, uid: 4300, gid: Self.writersGID, id: "unit-w").contains("accepted"))
        let supplementary = try Self.peer(socketPath, uid: 4301, gid: 4301, groups: [Self.writersGID], id: "unit-s")
        #expect(supplementary.contains("accepted"), "\(supplementary)")
        #expect(try Self.peer(socketPath, uid: 4302, gid: 4302, id: "unit-o").contains("EACCES"))

        #expect(notify.waitFor(line: "WATCHDOG=1", timeout: 5) != nil, "\(log())")

        // ExecReload=, run as systemd would with $MAINPID (the launcher exec'd into the daemon: same pid).
        try #"{"currency":"USD","rules":[{"affiliateToken":"*","amountMinor":650}]}"#.write(
            toFile: rules, atomically: true, encoding: .utf8)
        notify.reset()
        let reload = try #require(service.command("ExecReload")).map {
            $0.replacingOccurrences(of: "$MAINPID", with: "\(process.pid)")
        }
        #expect(try Shell.run(reload[0], Array(reload.dropFirst())).status == 0)
        #expect(notify.waitFor(line: "RELOADING=1") != nil)
        let ready = try #require(notify.waitFor(line: "READY=1"), "\(log())")
        #expect(!ready.contains("RELOAD FAILED"), "\(ready)")
        let after = try LineClient(path: socketPath)
        #expect(after.exchange([TestRecords.capabilities(id: "unit-4")]).map(\.status) == ["accepted"])

        // SIGTERM (systemd's stop) ends with STOPPING=1 and exit 0 well within TimeoutStopSec=.
        let stopTimeout = try #require(service.value("TimeoutStopSec").flatMap(UnitFile.seconds))
        _ = Signals.send(Signals.terminate, to: process.pid)
        #expect(notify.waitFor(line: "STOPPING=1") != nil)
        #expect(process.waitExit(timeout: stopTimeout) == 0, "\(log())")

        // The database is where the unit says, owned by the service user, with UMask=0027's mode.
        let database = "\(state)/offertrack.db"
        #expect(try JournalInspector(path: database).count() == 6)  // unit-1…3, unit-w, unit-s, unit-4
        let attributes = try FileManager.default.attributesOfItem(atPath: database)
        #expect((attributes[.ownerAccountID] as? NSNumber)?.uint32Value == Self.serviceUID)
        #expect(((attributes[.posixPermissions] as? Int) ?? 0o777) & 0o027 == 0)
    }

    /// A python client as another user: "accepted"/"rejected unauthorized" lines, or "EACCES".
    static func peer(_ socket: String, uid: UInt32, gid: UInt32, groups: [UInt32] = [], id: String) throws
        -> String
    {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sys.argv[1])
            except PermissionError:
                print("EACCES")
                sys.exit(0)
            s.settimeout(10)
            try:
                s.sendall(sys.argv[2].encode() + b"\\n")
            except OSError:
                pass
            print(s.makefile().readline().strip())
            """
        let groupFlag = groups.isEmpty ? "--clear-groups" : "--groups=\(groups.map(String.init).joined(separator: ","))"
        let outcome = try Shell.run(
            "/usr/bin/setpriv",
            ["--reuid=\(uid)", "--regid=\(gid)", groupFlag, "/usr/bin/python3", "-c", script, socket]
                + [TestRecords.capabilities(id: id)])
        return outcome.output
    }
}
