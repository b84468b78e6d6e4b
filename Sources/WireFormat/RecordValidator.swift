import OfferTrackDomain

/// Validates input lines against SPEC sections 2–3, answering the first failing check in the SPEC's order:
/// JSON, `type` present, `type` known, `id`, `ts`, `user`, `app`, `device`, then the type's own fields in the
/// order of its table. A member whose value is `null` counts as absent; unknown members are ignored. The peer's
/// right to send a valid `review` is the daemon's to check, after this.
public enum RecordValidator {
    /// Validates one line (without its `\n`).
    static func validate(_ bytes: UnsafeRawBufferPointer) -> LineVerdict {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            return .rejected(id: nil, error)
        }
        return validate(value)
    }

    /// Validates one line (without its `\n`).
    public static func validate(_ bytes: [UInt8]) -> LineVerdict {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Validates an already parsed line.
    public static func validate(_ value: JSONValue) -> LineVerdict {
        guard case .object(let object) = value else {
            return .rejected(id: nil, RecordError(.invalidJSON, "the line is not one JSON object"))
        }
        let fields = Fields(object)
        do {
            return .valid(try record(fields))
        } catch {
            // The id is reported whenever it is valid, whichever later check failed.
            var id: String?
            if case .string(let candidate) = fields.id, isValidID(candidate) { id = candidate }
            return .rejected(id: id, error)
        }
    }

    /// Whether `s` is a valid record id: 1–128 characters of `[A-Za-z0-9._:-]`.
    public static func isValidID(_ s: String) -> Bool {
        let count = s.utf8.count
        guard count >= 1 && count <= 128 else { return false }
        for byte in s.utf8 {
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

    private static func record(_ fields: Fields) throws(RecordError) -> Record {
        guard let typeValue = fields.type else { throw missing("type") }
        guard case .string(let typeName) = typeValue, let type = recordType(named: typeName) else {
            throw RecordError(
                .unknownType, "type must be capabilities, offer.presented, subscription.outcome or review")
        }
        guard let idValue = fields.id else { throw missing("id") }
        guard case .string(let id) = idValue, isValidID(id) else {
            throw invalid("id", "id must be a string of 1 to 128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'")
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
        }
        return Record(id: id, ts: ts, user: user, body: body)
    }

    /// A string of 1–`maximumLength` Unicode scalars without control characters (U+0000–U+001F, U+007F–U+009F).
    private static func text(_ value: JSONValue, field: String, maximumLength: Int) throws(RecordError) -> String {
        guard case .string(let string) = value else { throw invalid(field, "\(field) must be a string") }
        let (scalars, hasControl) = Token.measure(string)
        guard scalars >= 1 && scalars <= maximumLength else {
            throw invalid(field, "\(field) must be 1 to \(maximumLength) characters long")
        }
        guard !hasControl else { throw invalid(field, "\(field) may not contain control characters") }
        return string
    }

    // MARK: - capabilities (SPEC 3.1)

    /// The capabilities StoreKit or MusicKit reported.
    private struct Capabilities: OptionSet {
        let rawValue: Int64
        static let playback = Capabilities(rawValue: 1)
        static let subscriptionEligible = Capabilities(rawValue: 2)
        static let addToCloudLibrary = Capabilities(rawValue: 256)
        static let all: Capabilities = [.playback, .subscriptionEligible, .addToCloudLibrary]
    }

    private static func capabilitiesBody(_ fields: Fields) throws(RecordError) -> RecordBody {
        guard let authorizationValue = fields.authorization else { throw missing("authorization") }
        let authorized = try isAuthorized(authorizationValue)
        let capabilities = try capabilitiesOrSubscription(fields)
        if authorized && capabilities == nil {
            throw RecordError(
                .missingField, "capabilities (or subscription) is required when authorization is authorized",
                field: "capabilities")
        }
        return .capabilities(decision(authorized: authorized, capabilities ?? []))
    }

    /// Whether `authorization` is `authorized`: one of the four names or an integer literal 0–3.
    /// `3.0` and `3e0` are refused (not integer literals); `-0` is the integer 0, as numbers compare by value.
    private static func isAuthorized(_ value: JSONValue) throws(RecordError) -> Bool {
        switch value {
        case .string(let name):
            if equals(name, "authorized") { return true }
            if equals(name, "notDetermined") || equals(name, "denied") || equals(name, "restricted") { return false }
        case .number(let number):
            if let raw = number.int64Value, raw >= 0 && raw <= 3 { return raw == 3 }
        default:
            break
        }
        throw invalid(
            "authorization",
            "authorization must be notDetermined, denied, restricted, authorized or an integer from 0 to 3")
    }

    /// Validates the `capabilities` and `subscription` rows of SPEC 3.1 in table order; nil when neither is given.
    ///
    /// `capabilities` is checked completely first (its own errors win), then `subscription`: giving both is
    /// `invalid_field` at `subscription` (the second member) before `subscription`'s own content is looked at.
    private static func capabilitiesOrSubscription(_ fields: Fields) throws(RecordError) -> Capabilities? {
        var result: Capabilities?
        if let value = fields.capabilities { result = try capabilities(value) }
        if let value = fields.subscription {
            guard result == nil else {
                throw invalid("subscription", "subscription may not be given together with capabilities")
            }
            result = try subscription(value)
        }
        return result
    }

    /// `capabilities`: an array of StoreKit names (repeats allowed) or an integer bitmask of 1, 2 and 256
    /// (an integer literal: a fraction, an exponent, a negative value or any other bit is refused; `-0` is 0).
    private static func capabilities(_ value: JSONValue) throws(RecordError) -> Capabilities {
        switch value {
        case .array(let elements):
            var result: Capabilities = []
            for (index, element) in elements.enumerated() {
                guard case .string(let name) = element, let capability = capability(named: name) else {
                    throw invalid(
                        "capabilities[\(index)]",
                        "capabilities[\(index)] must be musicCatalogPlayback, musicCatalogSubscriptionEligible "
                            + "or addToCloudMusicLibrary")
                }
                result.insert(capability)
            }
            return result
        case .number(let number):
            guard let raw = number.int64Value, raw >= 0, Capabilities.all.isSuperset(of: Capabilities(rawValue: raw))
            else {
                throw invalid(
                    "capabilities",
                    "capabilities must be a non-negative integer bitmask of 1, 2 and 256, without fraction or exponent"
                )
            }
            return Capabilities(rawValue: raw)
        default:
            throw invalid("capabilities", "capabilities must be an array of capability names or an integer bitmask")
        }
    }

    private static func capability(named name: String) -> Capabilities? {
        if equals(name, "musicCatalogPlayback") { return .playback }
        if equals(name, "musicCatalogSubscriptionEligible") { return .subscriptionEligible }
        if equals(name, "addToCloudMusicLibrary") { return .addToCloudLibrary }
        return nil
    }

    /// `subscription`: an object with the three required booleans of MusicKit's `MusicSubscription`.
    /// Other members inside it are ignored, like unknown members elsewhere.
    private static func subscription(_ value: JSONValue) throws(RecordError) -> Capabilities {
        guard case .object(let object) = value else {
            throw invalid("subscription", "subscription must be an object")
        }
        var result: Capabilities = []
        let members: [(StaticString, String, Capabilities)] = [
            ("canPlayCatalogContent", "subscription.canPlayCatalogContent", .playback),
            ("canBecomeSubscriber", "subscription.canBecomeSubscriber", .subscriptionEligible),
            ("hasCloudLibraryEnabled", "subscription.hasCloudLibraryEnabled", .addToCloudLibrary),
        ]
        for (name, path, capability) in members {
            guard let flag = member(object, name) else { throw missing(path) }
            guard case .bool(let isSet) = flag else { throw invalid(path, "\(path) must be true or false") }
            if isSet { result.insert(capability) }
        }
        return result
    }

    private static func decision(authorized: Bool, _ capabilities: Capabilities) -> EligibilityDecision {
        if !authorized { return .unauthorized }
        if capabilities.contains(.playback) { return .subscriber }
        if capabilities.contains(.subscriptionEligible) { return .eligible }
        return .ineligible
    }

    // MARK: - offer.presented (SPEC 3.2)

    private static func presentedBody(_ fields: Fields) throws(RecordError) -> RecordBody {
        guard let offerValue = fields.offer else { throw missing("offer") }
        guard case .object(let offer) = offerValue else { throw invalid("offer", "offer must be an object") }

        guard let action = member(offer, "action") else { throw missing("offer.action") }
        guard case .string(let actionName) = action, equals(actionName, "subscribe") else {
            throw invalid("offer.action", "offer.action must be subscribe")
        }

        var affiliateToken: String?
        if let value = member(offer, "affiliateToken") {
            guard case .string(let token) = value, Token.isAffiliateToken(token) else {
                throw invalid(
                    "offer.affiliateToken",
                    "offer.affiliateToken must be 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'")
            }
            affiliateToken = token
        }

        var campaignToken: String?
        if let value = member(offer, "campaignToken") {
            let field = "offer.campaignToken"
            guard case .string(let token) = value else { throw invalid(field, "\(field) must be a string") }
            switch Token.campaignTokenProblem(token) {
            case .length?:
                throw invalid(field, "\(field) must be 1 to \(Token.maximumCampaignTokenLength) characters long")
            case .controlCharacter?: throw invalid(field, "\(field) may not contain control characters")
            case .reservedCharacter?: throw invalid(field, "\(field) may not contain ?, ! or &")
            case nil: campaignToken = token
            }
        }

        var messageIdentifier: String?
        if let value = member(offer, "messageIdentifier") {
            guard case .string(let name) = value,
                equals(name, "join") || equals(name, "addMusic") || equals(name, "connect")
                    || equals(name, "playMusic")
            else {
                throw invalid(
                    "offer.messageIdentifier", "offer.messageIdentifier must be join, addMusic, connect or playMusic")
            }
            messageIdentifier = name
        }

        // `itemID` first, then its StoreKit spelling: both at once is an error at the second.
        var itemID: String?
        if let value = member(offer, "itemID") { itemID = try itemIdentifier(value, field: "offer.itemID") }
        if let value = member(offer, "iTunesItemIdentifier") {
            guard itemID == nil else {
                throw invalid(
                    "offer.iTunesItemIdentifier",
                    "offer.iTunesItemIdentifier may not be given together with offer.itemID")
            }
            itemID = try itemIdentifier(value, field: "offer.iTunesItemIdentifier")
        }

        var loaded = true
        if let value = fields.loaded {
            guard case .bool(let flag) = value else { throw invalid("loaded", "loaded must be true or false") }
            loaded = flag
        }

        let offerBody = Offer(
            affiliateToken: affiliateToken, campaignToken: campaignToken, messageIdentifier: messageIdentifier,
            itemID: itemID)
        return .presented(offerBody, loaded: loaded)
    }

    /// An item id: a JSON string of 1–20 ASCII digits (a JSON number is refused).
    private static func itemIdentifier(_ value: JSONValue, field: String) throws(RecordError) -> String {
        guard case .string(let digits) = value, (1...20).contains(digits.utf8.count),
            digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw invalid(field, "\(field) must be a string of 1 to 20 digits") }
        return digits
    }

    // MARK: - subscription.outcome (SPEC 3.3)

    /// The `outcome` row covers `outcome`, `capabilities` and `subscription`: an explicit `outcome` is checked
    /// first, then a `capabilities`/`subscription` given with it is refused at that member; without `outcome`
    /// the pair is validated exactly as on a `capabilities` record (authorization treated as authorized).
    private static func outcomeBody(_ fields: Fields) throws(RecordError) -> RecordBody {
        let subscribed: Bool
        var decision: EligibilityDecision?
        if let value = fields.outcome {
            guard case .string(let name) = value, equals(name, "subscribed") || equals(name, "declined") else {
                throw invalid("outcome", "outcome must be subscribed or declined")
            }
            if fields.capabilities != nil {
                throw invalid("capabilities", "capabilities may not be given together with outcome")
            }
            if fields.subscription != nil {
                throw invalid("subscription", "subscription may not be given together with outcome")
            }
            subscribed = equals(name, "subscribed")
        } else {
            guard let capabilities = try capabilitiesOrSubscription(fields) else {
                throw RecordError(
                    .missingField, "outcome (or capabilities or subscription) is required", field: "outcome")
            }
            subscribed = capabilities.contains(.playback)
            decision = self.decision(authorized: true, capabilities)
        }
        var offerId: String?
        if let value = fields.offerId {
            guard case .string(let id) = value, isValidID(id) else {
                throw invalid(
                    "offerId",
                    "offerId must be a record id: 1 to 128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'")
            }
            offerId = id
        }
        return .outcome(subscribed: subscribed, decision: decision, offerId: offerId)
    }

    // MARK: - review (SPEC 3.4)

    /// `conversion`, `decision`, `reason` (required for `void` and `hold`), `note`, in the order of the table.
    private static func reviewBody(_ fields: Fields) throws(RecordError) -> RecordBody {
        guard let conversionValue = fields.conversion else { throw missing("conversion") }
        guard case .string(let conversion) = conversionValue, isValidID(conversion) else {
            throw invalid(
                "conversion",
                "conversion must be a record id: 1 to 128 characters from A-Z, a-z, 0-9, '.', '_', ':' and '-'")
        }
        guard let decisionValue = fields.decision else { throw missing("decision") }
        guard case .string(let decisionName) = decisionValue, let decision: ReviewDecision = named(decisionName) else {
            throw invalid("decision", "decision must be void, hold or release")
        }
        var reason: ReviewReason?
        if let value = fields.reason {
            guard case .string(let name) = value, let known: ReviewReason = named(name) else {
                throw invalid("reason", "reason must be fraud, refund, duplicate, test, policy or other")
            }
            reason = known
        } else if decision.requiresReason {
            throw RecordError(
                .missingField, "reason is required when decision is \(decision.rawValue)", field: "reason")
        }
        var note: String?
        if let value = fields.note { note = try text(value, field: "note", maximumLength: Review.maximumNoteLength) }
        return .review(Review(conversion: conversion, decision: decision, reason: reason, note: note))
    }

    /// The case whose raw value is exactly `name` (compared by bytes).
    private static func named<Case: CaseIterable & RawRepresentable<String>>(_ name: String) -> Case? {
        Case.allCases.first { ExactString.equals(name, $0.rawValue) }
    }

    // MARK: - Helpers

    /// The top-level members the SPEC names, found in one pass over the object (the validator's hot path);
    /// a member whose value is `null` stays nil, since it counts as absent.
    private struct Fields {
        var type: JSONValue?
        var id: JSONValue?
        var ts: JSONValue?
        var user: JSONValue?
        var app: JSONValue?
        var device: JSONValue?
        var authorization: JSONValue?
        var capabilities: JSONValue?
        var subscription: JSONValue?
        var offer: JSONValue?
        var loaded: JSONValue?
        var outcome: JSONValue?
        var offerId: JSONValue?
        var conversion: JSONValue?
        var decision: JSONValue?
        var reason: JSONValue?
        var note: JSONValue?

        init(_ object: JSONObject) {
            for (key, value) in object.members {
                if case .null = value { continue }
                switch key.utf8.count {
                case 2:
                    if equals(key, "id") { id = value } else if equals(key, "ts") { ts = value }
                case 3:
                    if equals(key, "app") { app = value }
                case 4:
                    if equals(key, "type") {
                        type = value
                    } else if equals(key, "user") {
                        user = value
                    } else if equals(key, "note") {
                        note = value
                    }
                case 5:
                    if equals(key, "offer") { offer = value }
                case 6:
                    if equals(key, "device") {
                        device = value
                    } else if equals(key, "loaded") {
                        loaded = value
                    } else if equals(key, "reason") {
                        reason = value
                    }
                case 7:
                    if equals(key, "outcome") { outcome = value } else if equals(key, "offerId") { offerId = value }
                case 8:
                    if equals(key, "decision") { decision = value }
                case 10:
                    if equals(key, "conversion") { conversion = value }
                case 12:
                    if equals(key, "capabilities") {
                        capabilities = value
                    } else if equals(key, "subscription") {
                        subscription = value
                    }
                case 13:
                    if equals(key, "authorization") { authorization = value }
                default:
                    continue
                }
            }
        }
    }

    /// The value of member `name`, compared by exact bytes; nil when absent or `null`.
    private static func member(_ object: JSONObject, _ name: StaticString) -> JSONValue? {
        for entry in object.members where equals(entry.key, name) {
            if case .null = entry.value { return nil }
            return entry.value
        }
        return nil
    }

    /// Exact byte equality with a literal (never Unicode canonical equivalence).
    @inline(__always)
    private static func equals(_ string: String, _ literal: StaticString) -> Bool {
        ExactString.equals(string, literal)
    }

    private static func recordType(named name: String) -> RecordType? {
        if equals(name, "capabilities") { return .capabilities }
        if equals(name, "offer.presented") { return .offerPresented }
        if equals(name, "subscription.outcome") { return .subscriptionOutcome }
        if equals(name, "review") { return .review }
        return nil
    }

    private static func missing(_ field: String) -> RecordError {
        RecordError(.missingField, "\(field) is required", field: field)
    }

    private static func invalid(_ field: String, _ message: String) -> RecordError {
        RecordError(.invalidField, message, field: field)
    }
}
