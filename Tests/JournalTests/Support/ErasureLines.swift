import JournalStore
import OfferTrackDomain

/// Record lines of a person to forget and of others, their erasures, and the lines as the writer's submissions.
enum ErasureLines {
    /// The person the tests forget.
    static let person = "person-7f3a9c-forget-me"

    /// Record `id` of `user` at `minute`: by `type % 4` a check, a presentation, a subscription or a decline.
    static func record(_ type: Int, _ id: String, minute: Int, user: String = person) -> String {
        let ts = Timestamp.format(1_795_000_000_000 + Int64(minute) * 60_000)
        let head = #""id":"\#(id)","ts":"\#(ts)","user":"\#(user)""#
        switch type % 4 {
        case 0: return #"{"type":"capabilities",\#(head),"authorization":3,"capabilities":2,"note":"x"}"#
        case 1: return #"{"type":"offer.presented",\#(head),"offer":{"action":"subscribe","affiliateToken":"aff"}}"#
        case 2: return #"{ "type" : "subscription.outcome", \#(head), "outcome":"subscribed"}"#
        default: return #"{"type":"subscription.outcome",\#(head),"outcome":"declined"}"#
        }
    }

    /// An erasure of `user` at `minute`.
    static func erasure(_ id: String, minute: Int, user: String = person) -> String {
        let ts = Timestamp.format(1_795_000_000_000 + Int64(minute) * 60_000)
        return #"{"type":"erasure","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","ticket":"DSR-\#(id)"}"#
    }

    /// `lines` as the writer's submissions.
    static func submissions(_ lines: [String]) throws -> [Submission] {
        try lines.map(JournalRecordLines.submission)
    }
}
