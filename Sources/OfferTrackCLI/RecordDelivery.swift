import Posix

/// Sends record lines to offertrackd until each has a final answer (SPEC 2): lines answered
/// `storage_unavailable` or `shutting_down`, or left unanswered by a dropped connection, are sent again with the
/// same bytes (so the same `id`), reconnecting and backing off, for up to `retryForSeconds`.
struct RecordDelivery {
    let socketPath: String
    let retryForSeconds: Int

    /// Retrying ran out of time: these lines (indices into the lines given) have no final answer.
    struct GaveUp: Error {
        let unanswered: [Int]
    }

    /// Delivers `lines`; `answered` gets each line's index and its final answer (accepted, duplicate, or a
    /// rejection no retry can change). Throws `CLIError` when the daemon refuses this peer, `GaveUp` when time
    /// runs out.
    func deliver(
        _ lines: [[UInt8]], over connection: inout DaemonConnection, answered: (Int, DaemonResponse) -> Void
    ) throws(any Error) {
        var unresolved = Array(lines.indices)
        var delay = 50
        let giveUpAt = Clock.monotonicMilliseconds() + Int64(retryForSeconds) * 1000
        while !unresolved.isEmpty {
            var retry: [Int] = []
            do {
                let answers = try connection.exchange(unresolved.map { lines[$0] })
                if let refusal = answers.first(where: \.refusesPeer) {
                    connection.close()
                    throw CLIError(
                        .unavailable,
                        "offertrackd at \(socketPath) refused this user (unauthorized: "
                            + "\(refusal.message ?? "this peer is not allowed")); nothing was journaled; the daemon "
                            + "must be started with --allow-uid or --allow-gid for it")
                }
                for (index, answer) in zip(unresolved, answers) {
                    if answer.isRetryable { retry.append(index) } else { answered(index, answer) }
                }
                // Answers that never came (the connection dropped) are retried too.
                retry.append(contentsOf: unresolved.dropFirst(answers.count))
                if answers.count < unresolved.count { connection.close() }
            } catch let refusal as CLIError {
                throw refusal
            } catch {
                retry = unresolved
                connection.close()
            }
            unresolved = retry
            guard !unresolved.isEmpty else { return }
            guard Clock.monotonicMilliseconds() < giveUpAt else { throw GaveUp(unanswered: unresolved) }
            Sleep.milliseconds(delay)
            delay = min(delay * 2, 2000)
            if !connection.isOpen {
                connection = (try? DaemonConnection.open(socketPath, retryForSeconds: 0)) ?? connection
            }
        }
    }
}
