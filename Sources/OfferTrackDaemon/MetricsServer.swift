import Dispatch
import Posix

/// Serves `GET /metrics` (HTTP/1.1, `Connection: close`) on its own thread, so a scrape never waits on the
/// event loop and the event loop never waits on a scrape. Requests are served one at a time with 2 s read and
/// write timeouts.
final class MetricsServer: Sendable {
    /// Why the endpoint could not listen.
    enum ListenFailure: Error, CustomStringConvertible {
        case tcp(PosixError)
        case unix(UnixSocket.BindError)

        /// Another socket holds the TCP address (a Unix path in use is refused as a configuration error).
        var isAddressInUse: Bool {
            if case .tcp(let error) = self { return error.isAddressInUse }
            return false
        }

        var description: String {
            switch self {
            case .tcp(let error): "\(error)"
            case .unix(let error): "\(error)"
            }
        }
    }

    private let listener: Int32
    private let render: @Sendable () -> String
    private let log: Logger
    private let queue = DispatchQueue(label: "offertrack.metrics")

    /// Binds `address` now (so a bad address fails the start) and serves once `start()` is called.
    init(address: MetricsAddress, log: Logger, render: @escaping @Sendable () -> String) throws(ListenFailure) {
        switch address {
        case .tcp(let host, let port):
            do { listener = try TCPSocket.listen(host: host, port: port) } catch { throw .tcp(error) }
        case .unix(let path):
            do { listener = try UnixSocket.listen(path: path, mode: 0o660) } catch { throw .unix(error) }
        }
        self.render = render
        self.log = log
    }

    func start() {
        queue.async { [self] in
            var pause = AcceptPause()
            while true {
                let client: Int32?
                do {
                    client = try TCPSocket.accept(listener, timeoutMilliseconds: 1_000)
                } catch {
                    // Out of descriptors (EMFILE) the listener stays readable: pause instead of retrying at once,
                    // like the event loop's listener. (A plain sleep: Dispatch's timers need descriptors too.)
                    let now = Clock.monotonicMilliseconds()
                    let resume = pause.failed(now: now) {
                        log.warning(
                            "metrics endpoint: accept failed: \(error); accepting paused")
                    }
                    Sleep.milliseconds(Int(resume - now))
                    continue
                }
                guard let client else { continue }
                serve(client)
                FileDescriptor.close(client)
            }
        }
    }

    private func serve(_ client: Int32) {
        UnixSocket.setReceiveTimeout(client, seconds: 2)
        UnixSocket.setSendTimeout(client, seconds: 2)
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while request.count < 16_384, !Self.endsHeader(request) {
            let result = buffer.withUnsafeMutableBytes { try? FileDescriptor.read(client, into: $0) }
            guard case .transferred(let count)? = result, count > 0 else { break }
            request += buffer[0..<count]
        }
        let response = Self.response(to: request, body: render)
        try? FileDescriptor.writeAll(client, Array(response.utf8))
    }

    private static func endsHeader(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes[(bytes.count - 4)...].elementsEqual([13, 10, 13, 10])
            || bytes.count >= 2 && bytes[(bytes.count - 2)...].elementsEqual([10, 10])
    }

    /// The whole HTTP response to a request's bytes: the metrics for `GET /metrics`, 404 or 405 otherwise.
    static func response(to request: [UInt8], body render: () -> String) -> String {
        let line = request.prefix { $0 != 13 && $0 != 10 }.split(separator: 32).map {
            String(decoding: $0, as: UTF8.self)
        }
        let status: String
        var body = ""
        var type = "text/plain; charset=utf-8"
        if line.count < 2 || (line[0] != "GET" && line[0] != "HEAD") {
            status = "405 Method Not Allowed"
            body = "only GET /metrics\n"
        } else if line[1] != "/metrics" && !line[1].hasPrefix("/metrics?") {
            status = "404 Not Found"
            body = "only GET /metrics\n"
        } else {
            status = "200 OK"
            body = render()
            type = "text/plain; version=0.0.4; charset=utf-8"
        }
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n"
        return line.first == "HEAD" ? head : head + body
    }
}
