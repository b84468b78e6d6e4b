import TestSupport

/// A line of the manual's shell commands, run as an operator runs it: `/bin/sh -c` with a plain `PATH`.
enum OperatorShell {
    static func run(_ command: String) throws -> Shell.Outcome {
        try Shell.run("/bin/sh", ["-c", command], environment: ["PATH": "/usr/bin:/bin"])
    }
}
