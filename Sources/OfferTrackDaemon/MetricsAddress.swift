/// Where `--metrics-listen` serves `GET /metrics`: `HOST:PORT` (`127.0.0.1:9464`, `[::1]:9464`, `localhost:9464`)
/// or an absolute path for a Unix socket.
public enum MetricsAddress: Sendable, Equatable {
    case tcp(host: String, port: UInt16)
    case unix(path: String)

    /// Parses the flag's value; nil when it is neither form.
    public init?(_ text: String) {
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]), port > 0
        else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        guard !host.isEmpty else { return nil }
        self = .tcp(host: host, port: port)
    }
}
