import Posix

/// One HTTP/1.1 `GET` to a server on 127.0.0.1 (the daemon's metrics endpoint, nats-server's monitor).
enum LoopbackHTTP {
    /// A loopback port nobody listens on now.
    static func freePort() throws -> UInt16 {
        let fd = try TCPSocket.listen(host: "127.0.0.1", port: 0)
        defer { FileDescriptor.close(fd) }
        return try TCPSocket.port(of: fd)
    }

    /// The whole response (status line, headers, body) to `GET path`, read until the server closes; nil when
    /// the connection or the request failed.
    static func get(_ path: String, port: UInt16) -> [UInt8]? {
        guard let fd = try? TCPSocket.connect(host: "127.0.0.1", port: port) else { return nil }
        defer { FileDescriptor.close(fd) }
        UnixSocket.setReceiveTimeout(fd, seconds: 2)
        let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
        guard (try? FileDescriptor.writeAll(fd, request)) != nil else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let result = buffer.withUnsafeMutableBytes { try? FileDescriptor.read(fd, into: $0) }
            guard case .transferred(let count)? = result, count > 0 else { break }
            response += buffer[0..<count]
        }
        return response
    }
}
