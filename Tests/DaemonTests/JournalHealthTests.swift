import Testing

@testable import OfferTrackDaemon

/// The journal's health as the event loop keeps it: what each commit outcome does, and what the log says once.
@Suite struct JournalHealthTests {
    static let busy = JournalFailure(kind: .busy, message: "database is locked")
    static let full = JournalFailure(kind: .full, message: "database or disk is full")
    static let corrupt = JournalFailure(kind: .corrupt, message: "database disk image is malformed")

    @Test func aFailureIsShownUntilACommitSucceeds() {
        var health = JournalHealth.healthy
        let first = health.failed(Self.busy)
        let second = health.failed(Self.full)
        #expect(first && !second, "only the first failure is news")
        #expect(health == .failing("database or disk is full"))
        let ended = health.committed()
        #expect(ended == "database or disk is full" && health == .healthy)
        let again = health.committed()
        #expect(again == nil)
    }

    @Test func aCorruptJournalStaysCorrupt() {
        var health = JournalHealth.failing("database is locked")
        let found = health.failed(Self.corrupt)
        let foundAgain = health.failed(Self.corrupt)
        let laterFailure = health.failed(Self.busy)
        #expect(found && !foundAgain && !laterFailure, "corruption is news once, even after a failure")
        let ended = health.committed()
        #expect(ended == nil, "a commit does not end it")
        #expect(health == .corrupt("database disk image is malformed"))
        #expect(health.statusPart(detections: 1).hasPrefix("; JOURNAL CORRUPT (1 detected"))
    }
}
