import Foundation

/// Runs helper programs for tests.
public enum Shell {
    /// How a program ended: its exit status and its stdout and stderr together.
    public struct Outcome: Sendable {
        public let status: Int32
        public let output: String
    }

    /// Runs `executable` with `arguments` (and `environment`, else this process's) to its end.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws
        -> Outcome
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}

/// The executables `swift build` put beside the test bundle.
public enum Binaries {
    public static let directory: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (executable as NSString).deletingLastPathComponent
    }()
    public static var daemon: String { "\(directory)/offertrackd" }
    public static var cli: String { "\(directory)/offertrack" }
}
