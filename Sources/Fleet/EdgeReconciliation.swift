import Journal

/// Whether what an edge forwarded reached the central journals (SPEC 10: every record an edge acknowledged
/// reaches a central journal): `offertrack verify --edge`. Nothing else can tell: a stream that lost messages
/// its consumers had already acknowledged gives the sequence numbers to messages published after, and the
/// consumers skip those; every lag then reads 0.
public enum EdgeReconciliation {
    /// How many missing or differing records are named one by one.
    static let namedProblems = 10

    /// Checks that every record of `edge` the stream acknowledged (`seq` up to the edge's watermark) is in one of
    /// `centrals` with the same line, reading `pageSize` records of the edge at a time, each page in a read
    /// transaction on every journal. Records past the watermark are still being forwarded and are only counted.
    /// Central journals that record their partitions must cover every partition, or the records of the others
    /// would all read as lost. Skipped for a journal that stores no watermark (it never forwarded anything).
    public static func check(
        edge: ReadOnlyJournal, centrals: [ReadOnlyJournal], pageSize: Int = 10_000
    ) throws -> JournalVerifier.Check {
        precondition(pageSize > 0, "pages of at least one record")
        let title = "edge \(edge.path): every record the stream acknowledged is in a central journal"
        guard let watermark = try ForwardingLog.storedWatermark(of: edge) else {
            return JournalVerifier.Check(
                name: title, problems: [],
                skipped: "it stores no forwarding watermark: not an edge's journal, or nothing was forwarded yet")
        }
        if try centrals.contains(where: { try FleetMembership.recorded(on: $0) != nil }) {
            do { _ = try FleetExport.checkCoverage(centrals) } catch let refusal as FleetExport.Refusal {
                return JournalVerifier.Check(
                    name: title, problems: ["\(refusal) (the records of the others would all read as lost)"])
            }
        }
        let last = try edge.lastSeq()
        var named: [String] = []
        var missing = 0
        var differing = 0
        var checked = 0
        var firstMissing: Int64?
        var after: Int64 = 0
        while after < watermark {
            let read = try ReadOnlyJournal.reading([edge] + centrals) {
                let page = try edge.lines(after: after, through: watermark, limit: pageSize)
                for (seq, id, line) in page {
                    after = seq
                    switch try find(id, in: centrals) {
                    case .some(let stored) where stored == line:
                        continue
                    case .some:
                        differing += 1
                        if named.count < namedProblems {
                            named.append("seq \(seq), id \(id): a central journal holds this id with other content")
                        }
                    case .none:
                        missing += 1
                        firstMissing = firstMissing ?? seq
                        if named.count < namedProblems { named.append("seq \(seq), id \(id): in no central journal") }
                    }
                }
                return page.count
            }
            checked += read
            if read < pageSize { break }
        }
        let name =
            "\(title) (\(checked), seq up to \(watermark)); \(max(0, last - watermark)) not yet acknowledged"
        var problems = named
        if let firstMissing {
            problems.append(
                "\(missing) in no central journal: once the stream's duplicate window (2 minutes by default) has "
                    + "passed since they were last published, forward them again with offertrack forward --db "
                    + "\(edge.path) --from-seq \(firstMissing) --servers URL (README \"The fleet\")")
        }
        if differing > 0 {
            problems.append(
                "\(differing) held with other content: a central keeps what it journaled first, so forwarding "
                    + "again changes nothing; find which edge or client sent these ids with two contents")
        }
        return JournalVerifier.Check(name: name, problems: problems)
    }

    /// The line the first of `centrals` that holds `id` stores; nil when none does.
    private static func find(_ id: String, in centrals: [ReadOnlyJournal]) throws -> [UInt8]? {
        for central in centrals {
            if let line = try central.line(ofID: id) { return line }
        }
        return nil
    }
}
