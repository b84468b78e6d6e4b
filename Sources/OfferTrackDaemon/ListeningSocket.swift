import Posix
import Systemd

/// The socket the daemon accepts on: passed by socket activation (`LISTEN_FDS`, exactly one listening
/// filesystem `AF_UNIX` stream socket), or bound at `--socket`.
struct ListeningSocket: Sendable {
    let fd: Int32
    /// For the log: "activated socket" or the path.
    let description: String
    /// Passed by the service manager: it stays with systemd, and its file is not ours to remove.
    let isActivated: Bool

    /// Takes the activated socket, or listens on `configuration.socketPath` (mode 0660).
    static func take(_ configuration: DaemonConfiguration) throws(StartupError) -> ListeningSocket {
        let activated = ServiceManager.listenDescriptors()
        if activated.count > 1 {
            throw StartupError(
                exitCode: .configuration, "socket activation passed \(activated.count) sockets; expected one")
        }
        if let fd = activated.first {
            guard ServiceManager.isListeningUnixStreamSocket(fd) else {
                throw StartupError(
                    exitCode: .configuration, "the activated socket (fd \(fd)) is not a listening AF_UNIX stream")
            }
            guard (try? UnixSocket.isAbstract(fd)) == false else {
                throw StartupError(
                    exitCode: .configuration,
                    "the activated socket (fd \(fd)) is an abstract AF_UNIX socket: it has no file mode, so any local "
                        + "process could connect; use a socket path (ListenStream=/run/offertrack/offertrack.sock)")
            }
            do { try FileDescriptor.setNonBlocking(fd) } catch { throw StartupError(exitCode: .osError, "\(error)") }
            return ListeningSocket(fd: fd, description: "activated socket", isActivated: true)
        }
        do {
            let fd = try UnixSocket.listen(path: configuration.socketPath, mode: 0o660)
            return ListeningSocket(fd: fd, description: configuration.socketPath, isActivated: false)
        } catch {
            if case .inUse = error { throw StartupError(exitCode: .unavailable, "\(error)") }
            throw StartupError(exitCode: .cannotCreate, "cannot listen: \(error)")
        }
    }

    /// After a failed start: closes a socket we bound and removes its file (nobody will accept on it).
    func abandon(path: String) {
        guard !isActivated else { return }
        FileDescriptor.close(fd)
        UnixSocket.removeSocketFile(path)
    }
}
