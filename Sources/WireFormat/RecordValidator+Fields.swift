import JSON
import OfferTrackDomain

extension RecordValidator {
    /// The top-level members the SPEC names, set straight from the line's scan (the validator's hot path) or picked
    /// from an already parsed object; a member whose value is `null` stays nil, since it counts as absent.
    struct Fields {
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
        var ticket: JSONValue?

        /// The members' names, in the order of their slots in ``set(_:_:)``.
        static let names = JSONMemberNames([
            "type",
            "id",
            "ts",
            "user",
            "app",
            "device",
            "authorization",
            "capabilities",
            "subscription",
            "offer",
            "loaded",
            "outcome",
            "offerId",
            "conversion",
            "decision",
            "reason",
            "note",
            "ticket",
        ])

        /// No member given.
        init() {}

        /// Sets the member in `slot` of ``names`` to `value`; `null` leaves it absent.
        mutating func set(_ slot: Int, _ value: consuming JSONValue) {
            if case .null = value { return }
            switch slot {
            case 0: type = value
            case 1: id = value
            case 2: ts = value
            case 3: user = value
            case 4: app = value
            case 5: device = value
            case 6: authorization = value
            case 7: capabilities = value
            case 8: subscription = value
            case 9: offer = value
            case 10: loaded = value
            case 11: outcome = value
            case 12: offerId = value
            case 13: conversion = value
            case 14: decision = value
            case 15: reason = value
            case 16: note = value
            case 17: ticket = value
            default: return
            }
        }

        /// The fields of an already parsed object.
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
                    } else if equals(key, "ticket") {
                        ticket = value
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
}
