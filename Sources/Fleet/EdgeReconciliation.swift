import Journal
import SQLite

/// Whether what an edge forwarded reached the central journals (SPEC 10: every record an edge acknowledged
/// reaches a central journal): `offertrack verify --edge`. Nothing else can tell: a stream that lost messages
/// its consumers had already acknowledged gives the sequence numbers to messages published after, and the
/// consumers skip those; every lag then reads 0.
public enum EdgeReconciliation {
    /// How many missing or differing records are named one by one.
    static let namedProblems = 10

    /// Checks that every record of `edge` the stream acknowledged (`seq` up to the edge's watermark) is in one of
    /// `centrals` with the same line, reading `pageSize` records of the edge at a time, each page in one snapshot
    /// of every journal. Records past the watermark are still being forwarded and are only counted.
    public static func check(
        edge: ReadOnlyJournal, centrals: [ReadOnlyJournal], pageSize: Int = 10_000
    ) throws -> JournalVerifier.Check {
        let watermark = try ForwardingLog.watermark(on: edge.connection)
        let last = try edge.connection.scalarInt("SELECT coalesce(max(seq), 0) FROM records") ?? 0
        let page = try edge.connection.prepare(
            "SELECT seq, id, line FROM records WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3")
        let lookups = try centrals.map { try $0.connection.prepare("SELECT line FROM records WHERE id = ?1") }
        var problems: [String] = []
        var missing = 0
        var differing = 0
        var checked = 0
        var firstSeq: Int64?
        var after: Int64 = 0
        while after < watermark {
            let journals = [edge] + centrals
            for journal in journals { try journal.connection.execute("BEGIN") }
            defer { for journal in journals { journal.connection.rollbackIfActive() } }
            try page.bind(after, at: 1)
            try page.bind(watermark, at: 2)
            try page.bind(Int64(pageSize), at: 3)
            defer { page.reset() }
            var read = 0
            while try page.step() {
                read += 1
                let (seq, id, line) = (page.int64(0), page.text(1) ?? "", page.bytes(2))
                after = seq
                switch try find(id, in: lookups) {
                case .some(let stored) where stored == line: continue
                case .some:
                    differing += 1
                    if problems.count < namedProblems {
                        problems.append("seq \(seq), id \(id): a central journal holds this id with other content")
                    }
                case .none:
                    missing += 1
                    if problems.count < namedProblems { problems.append("seq \(seq), id \(id): in no central journal") }
                }
                firstSeq = firstSeq ?? seq
            }
            checked += read
            if read < pageSize { break }
        }
        let unacknowledged = max(0, last - watermark)
        let name =
            "edge \(edge.path): every record the stream acknowledged (\(checked), seq up to \(watermark)) is in a "
            + "central journal; \(unacknowledged) not yet acknowledged"
        guard let firstSeq else { return JournalVerifier.Check(name: name, problems: []) }
        problems.append(
            "\(missing) in no central journal, \(differing) held with other content: once the stream's duplicate "
                + "window (2 minutes by default) has passed since they were last published, forward again with "
                + "offertrack forward --db \(edge.path) --from-seq \(firstSeq) --servers URL (README \"The fleet\")")
        return JournalVerifier.Check(name: name, problems: problems)
    }

    /// The line the first of `lookups` that holds `id` stores; nil when none does.
    private static func find(_ id: String, in lookups: [Statement]) throws -> [UInt8]? {
        for lookup in lookups {
            try lookup.bind(id, at: 1)
            defer { lookup.reset() }
            if try lookup.step() { return lookup.bytes(0) }
        }
        return nil
    }
}
