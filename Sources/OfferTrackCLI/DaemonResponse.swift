import JSON
import OfferTrackDomain
import WireFormat

/// One response line from the daemon, decoded.
struct DaemonResponse: Equatable {
    enum Status: String {
        case accepted, duplicate, rejected
    }

    let status: Status
    /// The answer's `id`: nil when it is JSON `null` (or absent).
    let id: String?
    let seq: Int64?
    let code: String?
    let message: String?
    let field: String?
    /// The line as the daemon wrote it.
    let line: [UInt8]

    /// Whether the record should be sent again with the same id.
    var isRetryable: Bool {
        status == .rejected
            && (code == ErrorCode.storageUnavailable.rawValue || code == ErrorCode.shuttingDown.rawValue)
    }

    /// The daemon refused this peer as a whole (SPEC section 2: `unauthorized` with `id` null, then it closes):
    /// no retry can succeed.
    var refusesPeer: Bool { status == .rejected && code == ErrorCode.unauthorized.rawValue && id == nil }

    init?(line: [UInt8]) {
        guard case .object(let object)? = try? JSONParser.parse(line),
            case .string(let statusText)? = object["status"], let status = Status(rawValue: statusText)
        else { return nil }
        self.status = status
        self.line = line
        if case .string(let id)? = object["id"] { self.id = id } else { id = nil }
        if case .number(let number)? = object["seq"] { seq = number.int64Value } else { seq = nil }
        if case .object(let error)? = object["error"] {
            if case .string(let code)? = error["code"] { self.code = code } else { code = nil }
            if case .string(let message)? = error["message"] { self.message = message } else { message = nil }
            if case .string(let field)? = error["field"] { self.field = field } else { field = nil }
        } else {
            code = nil
            message = nil
            field = nil
        }
    }
}
