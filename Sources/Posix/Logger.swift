/// Writes log lines to stderr, each with an sd-daemon priority prefix (`<3>` … `<7>`, sd-daemon.h's `SD_ERR` …
/// `SD_DEBUG`) before `program: `. journald reads the prefix as the line's priority (the unit's
/// `SyslogLevelPrefix=`, yes by default) and strips it, so `journalctl -p err` finds what matters; on a terminal
/// the prefix stays visible. A message of several lines is written as several prefixed lines.
///
/// The daemon's priorities (the one list; offertrackd and the Fleet module log only through a `Logger`):
/// - error (3): the journal corrupt or failing to commit, checkpoints failing, a start refused (every exit
///   other than 0), the event loop failing, a fatal failure that stops the daemon;
/// - warning (4): a problem the daemon rides out or an operator should look at: a refused rules reload, accept
///   failing, a hot user, the stream down, records refused from the stream, a start making no progress, a
///   service manager that cannot be told, a test-only setting;
/// - notice (5): a state changing back to normal or on an operator's order: the journal or checkpoints
///   recovering, the stream up again, stopping, rules reloaded, the stream created again;
/// - info (6): progress and routine: listening, stopped, quick_check done, users learned, recompute finished;
/// - debug (7): unused today.
public struct Logger: Sendable {
    /// A line's priority, as syslog and sd-daemon.h number them.
    public enum Priority: Int, Sendable, Comparable, CaseIterable {
        case error = 3
        case warning = 4
        case notice = 5
        case info = 6
        case debug = 7

        /// The sd-daemon prefix: `<3>` for `error`.
        public var prefix: String { "<\(rawValue)>" }

        public static func < (lhs: Priority, rhs: Priority) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    private let write: @Sendable (Priority, String) -> Void

    /// Writes `<N>program: message` lines to stderr.
    public init(program: String) {
        write = { priority, message in
            FileDescriptor.printError(Self.lines(priority, program: program, message))
        }
    }

    /// Hands every message (unprefixed, without the program's name) to `write`: for tests, and for tools that
    /// print to a terminal their own way.
    public init(write: @escaping @Sendable (Priority, String) -> Void) {
        self.write = write
    }

    /// A logger that drops every line.
    public static let discard = Logger { _, _ in }

    /// `message` as stderr gets it: every line prefixed with `priority` and `program: `.
    public static func lines(_ priority: Priority, program: String, _ message: String) -> String {
        var text = Substring(message)
        while text.hasSuffix("\n") { text = text.dropLast() }
        return text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "\(priority.prefix)\(program): \($0)" }
            .joined(separator: "\n")
    }

    /// Logs `message` at `priority`.
    public func log(_ priority: Priority, _ message: String) { write(priority, message) }

    /// Logs at `error` (3): something failed that an operator must fix.
    public func error(_ message: String) { write(.error, message) }

    /// Logs at `warning` (4): a problem the daemon rides out, or one an operator should look at.
    public func warning(_ message: String) { write(.warning, message) }

    /// Logs at `notice` (5): a normal but significant change (a recovery, a stop, a reload).
    public func notice(_ message: String) { write(.notice, message) }

    /// Logs at `info` (6): progress and routine events.
    public func info(_ message: String) { write(.info, message) }

    /// Logs at `debug` (7).
    public func debug(_ message: String) { write(.debug, message) }
}
