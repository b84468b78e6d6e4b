import JSON
import OfferTrackDomain

extension RecordValidator {
    // MARK: - offer.presented (SPEC 3.2)

    static func presentedBody(_ fields: Fields) throws(RecordError) -> RecordBody {
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
    static func itemIdentifier(_ value: JSONValue, field: String) throws(RecordError) -> String {
        guard case .string(let digits) = value, (1...20).contains(digits.utf8.count),
            digits.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { throw invalid(field, "\(field) must be a string of 1 to 20 digits") }
        return digits
    }
}
