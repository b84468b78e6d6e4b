import Testing

@testable import OfferTrackDaemon

/// The erased ids' sweep's bookkeeping (`ErasedIDsQueue`), step by step, computed by hand: a search that finds nothing
/// ends the ids it looked for and only those; ids that came while it ran are looked for by the next; pages found wait
/// to be zeroed; after the last round allowed the searched ids leave with a warning's figures.
@Suite struct ErasedIDsQueueTests {
    static let a = Array("erased:a".utf8)
    static let b = Array("erased:b".utf8)
    static let c = Array("erased:c".utf8)

    @Test func aSearchThatFindsNothingEndsOnlyTheIDsItLookedFor() {
        var queue = ErasedIDsQueue()
        queue.add([Self.a, []])
        #expect(queue.needles == [Self.a])
        #expect(queue.beginSearch() == [Self.a])
        queue.add([Self.b])
        #expect(queue.searchEnded(found: [], maximumRounds: 5) == .init(rounds: 0, pages: 0, done: true))
        #expect(queue.needles == [Self.b])
        #expect(queue.phase == .idle)
        #expect(queue.beginSearch() == [Self.b])
        #expect(queue.searchEnded(found: [], maximumRounds: 5) == .init(rounds: 0, pages: 0, done: true))
        #expect(queue.needles.isEmpty)
    }

    @Test func pagesFoundWaitToBeZeroedAndTheNextSearchLooksForEveryIDWaiting() {
        var queue = ErasedIDsQueue()
        queue.add([Self.a])
        _ = queue.beginSearch()
        queue.add([Self.b])
        #expect(queue.searchEnded(found: [7, 9], maximumRounds: 5) == nil)
        #expect(queue.phase == .found([7, 9]))
        // The sweep zeroes them (a round), then searches again: for a, and b which came meanwhile.
        queue.rounds += 1
        queue.pagesScrubbed += 2
        #expect(queue.beginSearch() == [Self.a, Self.b])
        queue.add([Self.c])
        #expect(queue.searchEnded(found: [], maximumRounds: 5) == .init(rounds: 1, pages: 2, done: true))
        #expect(queue.needles == [Self.c])
        #expect(queue.rounds == 0 && queue.pagesScrubbed == 0)
    }

    @Test func afterTheLastRoundTheSearchedIDsLeaveWithWhatStillHoldsThem() {
        var queue = ErasedIDsQueue()
        queue.add([Self.a])
        _ = queue.beginSearch()
        queue.add([Self.b])
        queue.rounds = 2
        #expect(queue.searchEnded(found: [3, 4, 5], maximumRounds: 2) == .init(rounds: 2, pages: 3, done: false))
        #expect(queue.needles == [Self.b])
        #expect(queue.phase == .idle && queue.rounds == 0)
    }
}
