/// The erased ids `ErasedBytesSweep` looks for, and where its rounds are: which ids the running search looks for,
/// and what the last one found. A search that finds nothing ends the ids it looked for (nothing writes them again
/// once renamed); ids that came while it ran wait for the next, so that erasures coming all the time do not make
/// every search look for every id since the first.
struct ErasedIDsQueue {
    enum Phase: Equatable {
        /// Nothing to do, or a search is to start after the next complete `TRUNCATE`.
        case idle
        case searching
        /// Pages found by the last search, to zero after the next complete `TRUNCATE`.
        case found([Int64])
    }

    /// How a search ended for the ids it looked for: none of them is anywhere (`done`), or some still are after
    /// the last round allowed; `rounds` scrubs zeroed `pages` pages (or, when not done, `pages` still hold one).
    struct Report: Equatable {
        var rounds: Int
        var pages: Int
        var done: Bool
    }

    /// The ids waiting, in the order they came: the first `searched` of them are those the running (or last)
    /// search looked for.
    private(set) var needles: [[UInt8]] = []
    private(set) var searched = 0
    var phase = Phase.idle
    /// Scrubs since the ids being searched came, and the pages they zeroed.
    var rounds = 0
    var pagesScrubbed = 0

    /// Adds the ids of people whose rename is done (empty ones are never found, and left out).
    mutating func add(_ ids: [[UInt8]]) {
        needles.append(contentsOf: ids.filter { !$0.isEmpty })
    }

    /// A search starts: it looks for every id waiting now.
    mutating func beginSearch() -> [[UInt8]] {
        searched = needles.count
        return needles
    }

    /// The search begun last found `pages` holding one of its ids. Nothing found, or still found after
    /// `maximumRounds` scrubs: its ids leave the queue and the report says so; otherwise the pages wait to be
    /// zeroed (nil).
    mutating func searchEnded(found pages: [Int64], maximumRounds: Int) -> Report? {
        if !pages.isEmpty, rounds < maximumRounds {
            phase = .found(pages)
            return nil
        }
        let report = Report(
            rounds: rounds, pages: pages.isEmpty ? pagesScrubbed : pages.count, done: pages.isEmpty)
        needles.removeFirst(searched)
        (searched, rounds, pagesScrubbed, phase) = (0, 0, 0, .idle)
        return report
    }
}
