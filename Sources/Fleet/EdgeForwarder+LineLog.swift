import Posix

extension EdgeForwarder {
    /// A forwarder whose log lines go to `log` as plain text, without priorities (`offertrack forward` prints
    /// them on a terminal); the daemon passes a `Logger` instead.
    public convenience init(
        journalPath: String, servers: [String], stream: FleetStream, name: String, startingAfter: Int64?,
        log: @escaping @Sendable (String) -> Void
    ) throws {
        try self.init(
            journalPath: journalPath, servers: servers, stream: stream, name: name, startingAfter: startingAfter,
            logger: Logger { _, line in log(line) })
    }
}
