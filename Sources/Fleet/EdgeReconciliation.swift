import JSON
import JournalStore
import JournalVerification
import OfferTrackDomain
import Posix
import WireFormat

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
    ///
    /// Beside running central daemons (their journals locked by them), a record the stream acknowledged may still
    /// be on its way to its central journal: what is missing is looked for again until it stops arriving
    /// (`Settling`), and only what never came is named.
    public static func check(
        edge: ReadOnlyJournal, centrals: [ReadOnlyJournal], pageSize: Int = 10_000,
        settling: Settling = .whenCentralsRun
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
        var missing: [(seq: Int64, id: String)] = []
        var differing = 0
        var renamedCentrally = 0
        var unrenamed = 0
        var sealed = 0
        var checked = 0
        var after: Int64 = 0
        while after < watermark {
            let read = try ReadOnlyJournal.reading([edge] + centrals) {
                let page = try edge.lines(after: after, through: watermark, limit: pageSize)
                for (seq, id, line) in page {
                    after = seq
                    switch try find(id, in: centrals) {
                    case .some(let stored) where stored == line:
                        continue
                    case .some(let stored):
                        switch Renaming.between(edge: line, central: stored) {
                        case .atTheCentralOnly:
                            renamedCentrally += 1
                            continue
                        case .atTheEdgeOnly(let name):
                            unrenamed += 1
                            if named.count < namedProblems {
                                named.append(
                                    "seq \(seq), id \(id): the edge renamed it \(name), a central journal holds it "
                                        + "under the name it had")
                            }
                            continue
                        case .none:
                            break
                        }
                        differing += 1
                        if named.count < namedProblems {
                            named.append("seq \(seq), id \(id): a central journal holds this id with other content")
                        }
                    case .none:
                        // A central journal that sealed the record's day keeps its id, not its line (SPEC 12).
                        if try centrals.contains(where: { try $0.sealed(id: id) }) {
                            sealed += 1
                        } else {
                            missing.append((seq, id))
                        }
                    }
                }
                return page.count
            }
            checked += read
            if read < pageSize { break }
        }
        if !missing.isEmpty, settling.waits(for: centrals) {
            missing = try settling.stillMissing(missing, in: centrals)
        }
        for (seq, id) in missing.prefix(max(0, namedProblems - named.count)) {
            named.append("seq \(seq), id \(id): in no central journal")
        }
        var name =
            "\(title) (\(checked), seq up to \(watermark)); \(max(0, last - watermark)) not yet acknowledged"
        if sealed > 0 {
            name += "; \(sealed) of days a central journal sealed (held there by id, their lines no longer compared)"
        }
        if renamedCentrally > 0 {
            name +=
                "; \(renamedCentrally) renamed in a central journal by an erasure this edge never received (the edge "
                + "still holds that person: send the erasure to this edge too)"
        }
        var problems = named
        if unrenamed > 0 {
            problems.append(
                "\(unrenamed) renamed by an erasure at the edge and not in the central journals (the erasure reached "
                    + "them without its person's name): send the erasure's line as first sent to the central daemon "
                    + "(offertrack ingest), which then renames them (docs: erasure in a fleet)")
        }
        if let firstMissing = missing.first?.seq {
            problems.append(
                "\(missing.count) in no central journal: once the stream's duplicate window (2 minutes by default) has "
                    + "passed since they were last published, forward them again with offertrack forward --db "
                    + "\(edge.path) --from-seq \(firstMissing) --servers URL (docs/fleet.md)")
        }
        if differing > 0 {
            problems.append(
                "\(differing) held with other content: a central keeps what it journaled first, so forwarding "
                    + "again changes nothing; find which edge or client sent these ids with two contents")
        }
        return JournalVerifier.Check(name: name, problems: problems)
    }

    /// How long records missing from the central journals are looked for again.
    public struct Settling: Sendable {
        /// Whether to look again at all: true when `centrals` are running (a daemon holds their lock).
        let applies: @Sendable ([ReadOnlyJournal]) -> Bool
        /// Looked for again every `intervalMilliseconds`, until none came for `quietMilliseconds` or
        /// `limitMilliseconds` passed.
        let intervalMilliseconds: Int
        let quietMilliseconds: Int64
        let limitMilliseconds: Int64

        /// Beside running central daemons: looked for again every 250 ms until none arrived for 5 s (60 s at most).
        public static let whenCentralsRun = Settling(
            applies: { centrals in centrals.contains { FileLock.isHeld(path: $0.path + ".lock") } },
            intervalMilliseconds: 250, quietMilliseconds: 5_000, limitMilliseconds: 60_000)
        /// Never looked for again (what is missing at the first look is named).
        public static let never = Settling(
            applies: { _ in false }, intervalMilliseconds: 0, quietMilliseconds: 0, limitMilliseconds: 0)

        func waits(for centrals: [ReadOnlyJournal]) -> Bool { applies(centrals) }

        /// Of `missing`, what is still in no central journal once none has arrived for the quiet time.
        func stillMissing(_ missing: [(seq: Int64, id: String)], in centrals: [ReadOnlyJournal]) throws -> [(
            seq: Int64, id: String
        )] {
            var left = missing
            let started = Clock.monotonicMilliseconds()
            var lastArrival = started
            while !left.isEmpty {
                let now = Clock.monotonicMilliseconds()
                if now - lastArrival >= quietMilliseconds || now - started >= limitMilliseconds { break }
                Sleep.milliseconds(intervalMilliseconds)
                let before = left.count
                left = try left.filter { try EdgeReconciliation.find($0.id, in: centrals) == nil }
                if left.count < before { lastArrival = Clock.monotonicMilliseconds() }
            }
            return left
        }
    }

    /// How an edge's line and a central journal's line of the same record differ by their `user` only (SPEC 11:
    /// an erasure applied by one journal and not the other).
    enum Renaming: Equatable {
        /// The central journal renamed it; the edge holds the person's name.
        case atTheCentralOnly
        /// The edge renamed it (`name`); the central journal holds another name.
        case atTheEdgeOnly(String)

        static func between(edge: [UInt8], central: [UInt8]) -> Renaming? {
            guard let edgeUser = UserMemberRewrite.user(of: edge),
                let centralUser = UserMemberRewrite.user(of: central),
                UserMemberRewrite.renaming(central, to: edgeUser) == edge
            else { return nil }
            let erased = { (user: String) in user.utf8.starts(with: Erasure.namePrefix.utf8) }
            if erased(edgeUser) && !erased(centralUser) { return .atTheEdgeOnly(edgeUser) }
            return erased(centralUser) ? .atTheCentralOnly : nil
        }
    }

    /// The line the first of `centrals` that holds `id` stores; nil when none does.
    static func find(_ id: String, in centrals: [ReadOnlyJournal]) throws -> [UInt8]? {
        for central in centrals {
            if let line = try central.line(ofID: id) { return line }
        }
        return nil
    }
}
