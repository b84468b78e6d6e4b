import Posix

/// Why the daemon could not start, with the sysexits code to exit with.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public let exitCode: ExitCode
    public let description: String

    public init(exitCode: ExitCode, _ description: String) {
        self.exitCode = exitCode
        self.description = description
    }
}
