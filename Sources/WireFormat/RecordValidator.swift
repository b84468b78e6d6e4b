import JSON
import OfferTrackDomain

/// Validates input lines against SPEC sections 2–3, answering the first failing check in the SPEC's order:
/// JSON, `type` present, `type` known, `id`, `ts`, `user`, `app`, `device`, then the type's own fields in the
/// order of its table. A member whose value is `null` counts as absent; unknown members are ignored. The peer's
/// right to send a valid `review` or `erasure` is the daemon's to check, after this.
public enum RecordValidator {
    /// Validates one line (without its `\n`).
    ///
    /// A line that is an object is scanned once straight into its ``Fields`` (no tree of the whole line); any
    /// other line is parsed, then refused as ``validate(_:sharedUsers:)-(JSONValue,_)`` refuses it.
    static func validate(_ bytes: UnsafeRawBufferPointer, sharedUsers: SharedUsers) -> LineVerdict {
        var fields = Fields()
        do {
            let isObject = try JSONParser.parseObject(bytes, keeping: Fields.names) { fields.set($0, $1) }
            if isObject { return verdict(fields, sharedUsers: sharedUsers) }
            return validate(try JSONParser.parse(bytes), sharedUsers: sharedUsers)
        } catch {
            return .rejected(id: nil, error)
        }
    }

    /// Validates one line (without its `\n`). `sharedUsers` are the rules' shared ids (rule 4.0), whose erasure
    /// is refused (SPEC 3.5).
    public static func validate(_ bytes: [UInt8], sharedUsers: SharedUsers = .defaults) -> LineVerdict {
        bytes.withUnsafeBytes { validate($0, sharedUsers: sharedUsers) }
    }

    /// Validates an already parsed line.
    public static func validate(_ value: JSONValue, sharedUsers: SharedUsers = .defaults) -> LineVerdict {
        guard case .object(let object) = value else {
            return .rejected(id: nil, RecordError(.invalidJSON, "the line is not one JSON object"))
        }
        return verdict(Fields(object), sharedUsers: sharedUsers)
    }

    /// The verdict on a line that is one JSON object, from its fields.
    private static func verdict(_ fields: Fields, sharedUsers: SharedUsers) -> LineVerdict {
        do {
            return .valid(try record(fields, sharedUsers: sharedUsers))
        } catch {
            // The id is reported whenever it is valid, whichever later check failed.
            var id: String?
            if case .string(let candidate) = fields.id, isValidID(candidate) { id = candidate }
            return .rejected(id: id, error)
        }
    }

    /// Whether `s` is a valid record id: 1–128 characters of `[A-Za-z0-9._:-]`.
    public static func isValidID(_ s: String) -> Bool { s.withContiguousUTF8(isValidID(bytes:)) }

    private static func isValidID(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 1 && bytes.count <= 128 else { return false }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
                UInt8(ascii: "-"):
                continue
            default:
                return false
            }
        }
        return true
    }

    // MARK: - Common fields

    static func record(_ fields: Fields, sharedUsers: SharedUsers) throws(RecordError) -> Record {
        guard let typeValue = fields.type else { throw missing("type") }
        guard case .string(let typeName) = typeValue, let type = recordType(named: typeName) else {
            throw RecordError(
                .unknownType, "type must be capabilities, offer.presented, subscription.outcome, review or erasure")
        }
        guard let idValue = fields.id else { throw missing("id") }
        guard case .string(let id) = idValue, isValidID(id) else {
            throw invalid("id", "id must be a string of 1 to 128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'")
        }
        if type == .erasure, id.utf8.count > Erasure.maximumIDLength {
            throw invalid("id", "an erasure's id must be at most 100 characters, so that erased:<id> is a valid user")
        }
        guard let tsValue = fields.ts else { throw missing("ts") }
        guard case .string(let tsText) = tsValue, let ts = Timestamp.parse(tsText) else {
            throw invalid(
                "ts",
                "ts must be an RFC 3339 date-time with Z or a numeric offset, such as 2026-11-28T10:15:00Z, "
                    + "with a year from 0001 to 9999 and a second below 60"
            )
        }
        guard let userValue = fields.user else { throw missing("user") }
        let user = try text(userValue, field: "user", maximumLength: 128)
        if let app = fields.app { _ = try text(app, field: "app", maximumLength: 255) }
        if let device = fields.device { _ = try text(device, field: "device", maximumLength: 128) }
        let body: RecordBody
        switch type {
        case .capabilities: body = try capabilitiesBody(fields)
        case .offerPresented: body = try presentedBody(fields)
        case .subscriptionOutcome: body = try outcomeBody(fields)
        case .review: body = try reviewBody(fields)
        case .erasure: body = try erasureBody(fields, user: user, sharedUsers: sharedUsers)
        }
        return Record(id: id, ts: ts, user: user, body: body)
    }

    /// A string of 1–`maximumLength` Unicode scalars without control characters (U+0000–U+001F, U+007F–U+009F).
    static func text(_ value: JSONValue, field: String, maximumLength: Int) throws(RecordError) -> String {
        guard case .string(let string) = value else { throw invalid(field, "\(field) must be a string") }
        let (scalars, hasControl) = Token.measure(string)
        guard scalars >= 1 && scalars <= maximumLength else {
            throw invalid(field, "\(field) must be 1 to \(maximumLength) characters long")
        }
        guard !hasControl else { throw invalid(field, "\(field) may not contain control characters") }
        return string
    }

    // MARK: - Helpers

    /// The value of member `name`, compared by exact bytes; nil when absent or `null`.
    static func member(_ object: JSONObject, _ name: StaticString) -> JSONValue? {
        for entry in object.members where equals(entry.key, name) {
            if case .null = entry.value { return nil }
            return entry.value
        }
        return nil
    }

    /// Exact byte equality with a literal (never Unicode canonical equivalence).
    @inline(__always)
    static func equals(_ string: String, _ literal: StaticString) -> Bool {
        ExactString.equals(string, literal)
    }

    static func recordType(named name: String) -> RecordType? {
        if equals(name, "capabilities") { return .capabilities }
        if equals(name, "offer.presented") { return .offerPresented }
        if equals(name, "subscription.outcome") { return .subscriptionOutcome }
        if equals(name, "review") { return .review }
        if equals(name, "erasure") { return .erasure }
        return nil
    }

    static func missing(_ field: String) -> RecordError {
        RecordError(.missingField, "\(field) is required", field: field)
    }

    static func invalid(_ field: String, _ message: String) -> RecordError {
        RecordError(.invalidField, message, field: field)
    }
}
