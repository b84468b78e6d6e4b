/// A measurement that could not be made or whose result is wrong: the benchmark stops loudly with it.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
    /// The process exit code (0 for `--help`).
    let exitCode: Int32

    init(_ description: String, exitCode: Int32 = 1) {
        self.description = description
        self.exitCode = exitCode
    }
}
