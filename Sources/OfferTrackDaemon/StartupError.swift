/// Why the daemon could not start, with the sysexits code to exit with.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public let exitCode: Int32
    public let description: String

    public init(exitCode: Int32, _ description: String) {
        self.exitCode = exitCode
        self.description = description
    }
}
