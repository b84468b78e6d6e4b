/// The closed list of error codes of SPEC section 2.
public enum ErrorCode: String, Sendable, CaseIterable {
    case invalidJSON = "invalid_json"
    case lineTooLong = "line_too_long"
    case unknownType = "unknown_type"
    case missingField = "missing_field"
    case invalidField = "invalid_field"
    case idConflict = "id_conflict"
    case expired = "expired"
    case unauthorized = "unauthorized"
    case storageUnavailable = "storage_unavailable"
    case shuttingDown = "shutting_down"

    /// Whether a client should retry the same record with the same `id`.
    public var isRetryable: Bool { self == .storageUnavailable || self == .shuttingDown }
}

/// Why a line was rejected: the code, a human sentence and, for field errors, the field's path.
public struct RecordError: Error, Sendable, Equatable {
    public var code: ErrorCode
    public var message: String
    /// The dotted path of the field (`offer.campaignToken`, `capabilities[2]`); set for field errors only.
    public var field: String?

    public init(_ code: ErrorCode, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }
}
