import JSON
import OfferTrackDomain

extension RecordValidator {
    // MARK: - erasure (SPEC 3.5)

    /// `ticket`, then the user: a shared id (rule 4.0) names no person, so its erasure is refused at `user`.
    static func erasureBody(
        _ fields: Fields, user: String, sharedUsers: SharedUsers
    ) throws(RecordError) -> RecordBody {
        guard let ticketValue = fields.ticket else { throw missing("ticket") }
        let ticket = try text(ticketValue, field: "ticket", maximumLength: Erasure.maximumTicketLength)
        if sharedUsers.contains(user) {
            throw invalid(
                "user", "\(user) is a shared id (sharedUsers in the rules): it names no person, so it cannot be erased")
        }
        return .erasure(ticket: ticket)
    }
}
