import OfferTrackDomain

/// Valid record lines for integration tests.
enum TestRecords {
    static func capabilities(id: String, user: String = "u-1", ts: String = "2026-11-28T10:00:00Z") -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","authorization":"authorized","capabilities":["musicCatalogSubscriptionEligible"]}"#
    }

    static func presented(id: String, user: String = "u-1", ts: String = "2026-11-28T10:01:00Z") -> String {
        #"{"type":"offer.presented","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","offer":{"action":"subscribe","affiliateToken":"aff1"}}"#
    }

    /// A stream of distinct valid records with ids `prefix-0`, `prefix-1`, ….
    static func stream(prefix: String, count: Int) -> [String] {
        (0..<count).map { index in
            index % 2 == 0
                ? capabilities(id: "\(prefix)-\(index)", user: "u-\(index % 97)")
                : presented(id: "\(prefix)-\(index)", user: "u-\(index % 97)")
        }
    }

    /// A user checked eligible, shown the offer (`affiliate`, `campaign`) and subscribing at `ts`.
    static func conversion(_ user: String, affiliate: String?, campaign: String?, at ts: String) -> [String] {
        let base = Timestamp.parse(ts) ?? 0
        let at = { (offset: Int64) in Timestamp.format(base + offset) }
        var offer = #""action":"subscribe""#
        if let affiliate { offer += #","affiliateToken":"\#(affiliate)""# }
        if let campaign { offer += #","campaignToken":"\#(campaign)""# }
        return [
            #"{"type":"capabilities","id":"c-\#(user)","ts":"\#(at(-60_000))","user":"\#(user)","authorization":"authorized","capabilities":2}"#,
            #"{"type":"offer.presented","id":"p-\#(user)","ts":"\#(at(-30_000))","user":"\#(user)","offer":{\#(offer)}}"#,
            #"{"type":"subscription.outcome","id":"o-\#(user)","ts":"\#(at(0))","user":"\#(user)","outcome":"subscribed"}"#,
        ]
    }
}
