import Posix

/// A command failure: the message for stderr and the sysexits code to exit with.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    public let exitCode: Int32
    public let description: String

    public init(_ exitCode: ExitCode, _ description: String) {
        self.exitCode = exitCode.rawValue
        self.description = description
    }
}
