import JournalStore
import OfferTrackDomain
import SQLite
import WireFormat

/// Record lines for the journal tests, and a line as the writer's submission.
enum JournalRecordLines {
    /// `line` validated, as a submission to the writer; throws when it is not a valid record.
    static func submission(_ line: String) throws -> Submission {
        guard case .valid(let record) = RecordValidator.validate(Array(line.utf8)) else {
            throw SQLiteError(code: 0, message: "invalid test line \(line)")
        }
        return Submission(record: record, line: Array(line.utf8))
    }

    static func capabilities(_ id: String, user: String = "u", ts: String = "2026-11-28T10:00:00Z") -> String {
        #"{"type":"capabilities","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","authorization":3,"capabilities":2}"#
    }

    static func presented(_ id: String, user: String, ts: String) -> String {
        #"{"type":"offer.presented","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","offer":{"action":"subscribe","affiliateToken":"aff"}}"#
    }

    static func subscribed(_ id: String, user: String, ts: String) -> String {
        #"{"type":"subscription.outcome","id":"\#(id)","ts":"\#(ts)","user":"\#(user)","outcome":"subscribed"}"#
    }
}
