/// A `Codable` struct of the same shape as a record line, for comparing the validator with Foundation's
/// `JSONDecoder`. Fields that take several JSON types (`authorization`, `capabilities`) decode as `FlexibleValue`.
struct CodableRecord: Decodable {
    var type: String
    var id: String
    var ts: String
    var user: String
    var app: String?
    var device: String?
    var authorization: FlexibleValue?
    var capabilities: FlexibleValue?
    var subscription: SubscriptionFlags?
    var offer: CodableOffer?
    var loaded: Bool?
    var outcome: String?
    var offerId: String?
}

/// MusicKit's `subscription` object.
struct SubscriptionFlags: Decodable {
    var canPlayCatalogContent: Bool
    var canBecomeSubscriber: Bool
    var hasCloudLibraryEnabled: Bool
}

/// The `offer` object of an `offer.presented` record.
struct CodableOffer: Decodable {
    var action: String
    var affiliateToken: String?
    var campaignToken: String?
    var messageIdentifier: String?
    var itemID: String?
    var iTunesItemIdentifier: String?
}

/// A member that is a string, an integer or an array of strings.
enum FlexibleValue: Decodable {
    case string(String)
    case integer(Int)
    case names([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else {
            self = .names(try container.decode([String].self))
        }
    }
}
