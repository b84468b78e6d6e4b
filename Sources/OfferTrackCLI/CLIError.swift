/// A command failure: the message for stderr and the sysexits code to exit with.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    public let exitCode: Int32
    public let description: String

    public init(_ exitCode: ExitCode, _ description: String) {
        self.exitCode = exitCode.rawValue
        self.description = description
    }
}

/// The sysexits codes the CLI uses (SPEC section 6).
public enum ExitCode: Int32, Sendable {
    case ok = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case software = 70
    case cannotCreate = 73
    case ioError = 74
    case tryAgain = 75
    case configuration = 78
}
