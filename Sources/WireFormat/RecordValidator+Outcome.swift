import JSON
import OfferTrackDomain

extension RecordValidator {
    // MARK: - subscription.outcome (SPEC 3.3)

    /// The `outcome` row covers `outcome`, `capabilities` and `subscription`: an explicit `outcome` is checked
    /// first, then a `capabilities`/`subscription` given with it is refused at that member; without `outcome`
    /// the pair is validated exactly as on a `capabilities` record (authorization treated as authorized).
    static func outcomeBody(_ fields: Fields) throws(RecordError) -> RecordBody {
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
}
