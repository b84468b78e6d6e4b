import JSON
import JournalStore
import OfferTrackDomain
import SQLite

/// `verify`'s check of SPEC section 11: no stored form still names a forgotten person (each user's name is
/// tested through the journal's keyed hash, as the writer tests incoming records), and every renamed record's
/// line names the user its column does.
enum ErasureCheck {
    static func check(_ connection: Connection) throws -> JournalVerifier.Check {
        let name = "forgotten people are named nowhere, and renamed records are renamed in their lines (SPEC 11)"
        let erased = ErasedUsers()
        try erased.load(on: connection)
        var problems: [String] = []
        if !erased.isEmpty {
            let users = try connection.prepare("SELECT k, user FROM users")
            while try users.step() {
                guard let user = users.text(1), try erased.isForgotten(user, on: connection) else { continue }
                problems.append("the user with key \(users.int64(0)) still has a forgotten person's id")
                if problems.count >= 10 { break }
            }
        }
        // A rename an erasure's batch left to later chunks: finished before a started daemon answers anything.
        let hasPending =
            try connection.scalarInt("SELECT count(*) FROM sqlite_master WHERE name = 'pending_renames'") == 1
        if hasPending {
            let pending = try connection.prepare("SELECT k, name FROM pending_renames")
            while try pending.step() {
                problems.append(
                    "the rename of the user with key \(pending.int64(0)) to \(pending.text(1) ?? "") is unfinished "
                        + "(offertrackd finishes it when it starts)")
            }
        }
        let renamed = try connection.prepare(
            "SELECT seq, user, line FROM records WHERE user >= ?1 AND user < ?2")
        try renamed.bind(Erasure.namePrefix, at: 1)
        try renamed.bind("erased;", at: 2)
        while try renamed.step(), problems.count < 20 {
            guard let named = UserMemberRewrite.user(of: renamed.bytes(2)), let user = renamed.text(1),
                ExactString.equals(named, user)
            else {
                problems.append(
                    "record seq \(renamed.int64(0)): its line does not name its user \(renamed.text(1) ?? "")")
                continue
            }
        }
        return JournalVerifier.Check(name: name, problems: problems)
    }
}
