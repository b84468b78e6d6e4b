import Posix
import Testing

/// What the daemon writes to stderr, read as journald does.
enum DaemonLog {
    /// Every line is `<N>offertrackd: …` with N from 3 (error) to 7 (debug).
    static func expectEveryLinePrefixed(_ log: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let unprefixed = log.split(separator: "\n").filter { line in
            !Logger.Priority.allCases.contains { line.hasPrefix("\($0.prefix)offertrackd: ") }
        }
        #expect(unprefixed.isEmpty, "lines without a priority: \(unprefixed)", sourceLocation: sourceLocation)
    }
}
