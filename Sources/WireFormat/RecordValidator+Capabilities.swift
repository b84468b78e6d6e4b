import JSON
import OfferTrackDomain

extension RecordValidator {
    // MARK: - capabilities (SPEC 3.1)

    /// The capabilities StoreKit or MusicKit reported.
    struct Capabilities: OptionSet {
        let rawValue: Int64
        static let playback = Capabilities(rawValue: 1)
        static let subscriptionEligible = Capabilities(rawValue: 2)
        static let addToCloudLibrary = Capabilities(rawValue: 256)
        static let all: Capabilities = [.playback, .subscriptionEligible, .addToCloudLibrary]
    }

    static func capabilitiesBody(_ fields: Fields) throws(RecordError) -> RecordBody {
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
    static func isAuthorized(_ value: JSONValue) throws(RecordError) -> Bool {
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
    static func capabilitiesOrSubscription(_ fields: Fields) throws(RecordError) -> Capabilities? {
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
    static func capabilities(_ value: JSONValue) throws(RecordError) -> Capabilities {
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

    static func capability(named name: String) -> Capabilities? {
        if equals(name, "musicCatalogPlayback") { return .playback }
        if equals(name, "musicCatalogSubscriptionEligible") { return .subscriptionEligible }
        if equals(name, "addToCloudMusicLibrary") { return .addToCloudLibrary }
        return nil
    }

    /// `subscription`: an object with the three required booleans of MusicKit's `MusicSubscription`.
    /// Other members inside it are ignored, like unknown members elsewhere.
    static func subscription(_ value: JSONValue) throws(RecordError) -> Capabilities {
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

    static func decision(authorized: Bool, _ capabilities: Capabilities) -> EligibilityDecision {
        if !authorized { return .unauthorized }
        if capabilities.contains(.playback) { return .subscriber }
        if capabilities.contains(.subscriptionEligible) { return .eligible }
        return .ineligible
    }
}
