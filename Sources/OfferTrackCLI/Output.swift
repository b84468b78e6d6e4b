import Posix

/// The CLI's stdout.
enum Output {
    /// Writes `text` to stdout; a failed write is an I/O error (exit 74).
    static func write(_ text: String) throws(CLIError) {
        do { try FileDescriptor.writeAll(1, Array(text.utf8)) } catch { throw CLIError(.ioError, "stdout: \(error)") }
    }
}
