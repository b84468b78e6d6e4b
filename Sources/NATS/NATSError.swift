import CNATS

/// A failed libnats call: which call, its status, and for JetStream API errors the server's error code.
public struct NATSError: Error, Sendable, CustomStringConvertible {
    public let call: String
    public let status: Int32
    /// JetStream's API error code (e.g. 10058 stream name in use), 0 when none.
    public let jetStreamCode: Int32
    public let text: String

    init(_ call: String, _ status: natsStatus, jetStreamCode: jsErrCode = jsErrCode(rawValue: 0)) {
        self.call = call
        self.status = Int32(status.rawValue)
        self.jetStreamCode = Int32(jetStreamCode.rawValue)
        var text = String(cString: natsStatus_GetText(status))
        var last = natsStatus(rawValue: 0)
        if let detail = nats_GetLastError(&last) { text += ": " + String(cString: detail) }
        self.text = text
    }

    public var description: String {
        "\(call): \(text)" + (jetStreamCode == 0 ? "" : " (JetStream error \(jetStreamCode))")
    }

    /// Whether the call timed out (the server or the stream did not answer in time).
    public var isTimeout: Bool { status == Int32(NATS_TIMEOUT.rawValue) }

    /// Throws unless `status` is `NATS_OK`.
    static func check(_ call: String, _ status: natsStatus, jetStreamCode: jsErrCode = jsErrCode(rawValue: 0))
        throws(NATSError)
    {
        guard status == NATS_OK else { throw NATSError(call, status, jetStreamCode: jetStreamCode) }
    }
}
