import Foundation
import Posix
import TestSupport
import Testing

/// SO_PEERCRED authorization (SPEC section 8), with a real client running as another uid via setpriv.
@Suite struct PeerAuthorizationTests {
    /// A python client run as `nobody`: connects, sends a record, prints every line it gets until EOF.
    static func runAsNobody(socket: String, groups: [UInt32] = []) throws -> Shell.Outcome {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX)
            s.connect(sys.argv[1])
            try:
                s.sendall(b'{"type":"capabilities","id":"nobody-1","ts":"2026-11-28T10:00:00Z","user":"u","authorization":0}\\n')
            except OSError:
                pass
            s.settimeout(10)
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
                if data.count(b"\\n") >= 1 and b"accepted" in data:
                    break
            sys.stdout.write(data.decode())
            """
        return try Shell.run(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534"]
                + (groups.isEmpty ? ["--clear-groups"] : ["--groups=\(groups.map(String.init).joined(separator: ","))"])
                + ["/usr/bin/python3", "-c", script, socket])
    }

    private func openUp(_ directory: ScratchDirectory, _ daemon: DaemonProcess) {
        chmod(directory.path, 0o755)
        chmod(daemon.socketPath, 0o666)
    }

    @Test func socketFileIsCreatedWithMode0660() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o660)
    }

    @Test func anUnallowedUIDGetsUnauthorizedAndIsDisconnected() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory)
        guard daemon.waitReady() else { return }
        openUp(directory, daemon)
        let outcome = try Self.runAsNobody(socket: daemon.socketPath)
        let lines = outcome.output.split(separator: "\n")
        #expect(lines.count == 1, "\(outcome.output)")
        let answer = try #require(lines.first.flatMap { Answer(String($0)) })
        #expect(answer.status == "rejected" && answer.code == "unauthorized" && answer.id == nil)
        #expect(try JournalInspector(path: daemon.databasePath).count() == 0)
    }

    @Test func anAllowedUIDIsServed() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory, arguments: ["--allow-uid", "65534"])
        guard daemon.waitReady() else { return }
        openUp(directory, daemon)
        let outcome = try Self.runAsNobody(socket: daemon.socketPath)
        #expect(outcome.output.contains(#""status":"accepted""#), "\(outcome.output)")
    }

    @Test func anAllowedGIDIsServed() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory, arguments: ["--allow-gid", "65534"])
        guard daemon.waitReady() else { return }
        openUp(directory, daemon)
        let outcome = try Self.runAsNobody(socket: daemon.socketPath)
        #expect(outcome.output.contains(#""status":"accepted""#), "\(outcome.output)")
    }

    /// `usermod -aG writers relay`: the allowed group is only a supplementary group of the peer (SO_PEERGROUPS).
    @Test func anAllowedSupplementaryGroupIsServed() throws {
        let directory = ScratchDirectory()
        let daemon = try DaemonProcess(in: directory, arguments: ["--allow-gid", "4242"])
        guard daemon.waitReady() else { return }
        openUp(directory, daemon)
        let outcome = try Self.runAsNobody(socket: daemon.socketPath, groups: [4241, 4242])
        #expect(outcome.output.contains(#""status":"accepted""#), "\(outcome.output)")
    }
}
