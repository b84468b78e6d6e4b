import OfferTrackDomain
import Posix
import WireFormat

/// Sending one operator's record (`review`, `erasure`) to the daemon as `ingest` does, retrying what may be
/// retried with the same id.
enum OperatorRecord {
    /// Sends `line` and returns the daemon's answer; a peer the daemon does not let send `what`s is exit 69.
    static func send(
        _ line: [UInt8], what: String, socketPath: String, retryForSeconds: Int
    ) throws(CLIError) -> DaemonResponse {
        var connection = try DaemonConnection.open(socketPath, retryForSeconds: 0)
        defer { connection.close() }
        var answer: DaemonResponse?
        do {
            try RecordDelivery(socketPath: socketPath, retryForSeconds: retryForSeconds).deliver(
                [line], over: &connection
            ) { _, response in answer = response }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.tryAgain, "gave up after \(retryForSeconds) s: the \(what) was not journaled; run it again")
        }
        guard let answer else { throw CLIError(.software, "no answer from offertrackd") }
        if answer.status == .rejected, answer.code == ErrorCode.unauthorized.rawValue {
            try Output.write(String(decoding: answer.line, as: UTF8.self) + "\n")
            throw CLIError(
                .unavailable,
                "offertrackd at \(socketPath) does not accept \(what)s from this user: start it with "
                    + "--allow-review-uid or --allow-review-gid for it")
        }
        return answer
    }

    /// A new unique record id: `prefix-`, the time in milliseconds and 64 random bits, in base 36 (at most 30
    /// characters after the prefix).
    static func newID(_ prefix: String, at now: Int64) -> String {
        "\(prefix)-\(String(now, radix: 36))-\(String(UInt64.random(in: .min ... .max), radix: 36))"
    }
}
