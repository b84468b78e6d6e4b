/// The record types of SPEC section 3.
public enum RecordType: String, Sendable, CaseIterable {
    case capabilities = "capabilities"
    case offerPresented = "offer.presented"
    case subscriptionOutcome = "subscription.outcome"
    case review = "review"
    case erasure = "erasure"
}

/// The eligibility decision derived from StoreKit's authorization and capabilities (SPEC 3.1).
public enum EligibilityDecision: String, Sendable, CaseIterable {
    case unauthorized
    case subscriber
    case eligible
    case ineligible
}

/// The offer a presentation showed (SPEC 3.2), after validation.
public struct Offer: Sendable, Equatable {
    public var affiliateToken: String?
    public var campaignToken: String?
    /// The message identifier as given; nil when absent (which means `join`).
    public var messageIdentifier: String?
    /// `itemID` or `iTunesItemIdentifier`, whichever was given.
    public var itemID: String?

    public init(affiliateToken: String?, campaignToken: String?, messageIdentifier: String?, itemID: String?) {
        self.affiliateToken = affiliateToken
        self.campaignToken = campaignToken
        self.messageIdentifier = messageIdentifier
        self.itemID = itemID
    }

    /// The message identifier with the SPEC's default applied.
    public var effectiveMessageIdentifier: String { messageIdentifier ?? "join" }
}

/// What a validated record says, reduced to what attribution and reporting need.
public enum RecordBody: Sendable, Equatable {
    /// A `capabilities` record and the decision derived from it.
    case capabilities(EligibilityDecision)
    /// An `offer.presented` record.
    case presented(Offer, loaded: Bool)
    /// A `subscription.outcome` record: whether it is `subscribed`, the decision when capabilities were given,
    /// and the `offerId` it names.
    case outcome(subscribed: Bool, decision: EligibilityDecision?, offerId: String?)
    /// A `review` record: an operator's decision on one conversion (SPEC 3.4).
    case review(Review)
    /// An `erasure` record: a person asked to be forgotten (SPEC 3.5), with the operator's reference.
    case erasure(ticket: String)
}

/// A record that passed every rule of SPEC section 3.
public struct Record: Sendable, Equatable {
    public var id: String
    /// UTC milliseconds since the Unix epoch (fraction beyond milliseconds truncated).
    public var ts: Int64
    public var user: String
    public var body: RecordBody

    public init(id: String, ts: Int64, user: String, body: RecordBody) {
        self.id = id
        self.ts = ts
        self.user = user
        self.body = body
    }

    public var type: RecordType {
        switch body {
        case .capabilities: .capabilities
        case .presented: .offerPresented
        case .outcome: .subscriptionOutcome
        case .review: .review
        case .erasure: .erasure
        }
    }
}
