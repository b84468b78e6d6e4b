import AttributionJoin
import JournalStore
import OfferTrackDomain
import Posix
import SQLite

extension JournalSealer {
    /// Step 4 for one chunk: the next rows after `cursor` and up to `lastSeq` of days before the seal's end (other
    /// than reviews and erasures, and rows that must stay for now) leave `records`, in `seq` order, so that each page
    /// of the table and of its `id` index is written once (walked by user, each row dirtied a page of its own, about
    /// nine times a page). Each stays as its per-user index entry alone, its id's hash saying where (`SealedFacts`):
    /// what sealing keeps of any record, which step 5 then trims. A loaded presentation's derived row goes with it
    /// (sealed days count presentations from their sealed counts). At most `rowsPerChunk` rows, and no row after
    /// the first once the chunk has run `chunkMicroseconds`. Returns the `seq` it got to.
    func removeRows(after cursor: Int64, through lastSeq: Int64, state: SealState, derived: Bool) throws
        -> Int64
    {
        // Which rows: read before the write transaction, which then takes each again by `seq`.
        let pending = try connection.prepare(
            static: """
                SELECT seq FROM records WHERE seq > ?1 AND seq <= ?2 AND ts < ?3 AND type < 3 ORDER BY seq LIMIT ?4
                """)
        try pending.bind(cursor, at: 1)
        try pending.bind(lastSeq, at: 2)
        try pending.bind(state.sealedBefore, at: 3)
        try pending.bind(Int64(rowsPerChunk), at: 4)
        var seqs: [Int64] = []
        while try pending.step() { seqs.append(pending.int64(0)) }
        pending.reset()
        guard !seqs.isEmpty else { return lastSeq }
        return try step {
            let meta = JournalMeta(connection)
            let hashKey = try meta.value(SealState.hashKey).flatMap(SealedIDs.bytes(hex:)) ?? []
            let forwardedThrough = try meta.value(JournalFeed.forwardedThroughKey)
            let select = try connection.prepare(
                "SELECT r.seq = (SELECT max(seq) FROM records), u.k, \(RecordQueries.columns) "
                    + "FROM records r JOIN users u ON u.user = r.user WHERE r.seq = ?1")
            let derivedRow = try connection.prepare(
                static: "SELECT eligible FROM derived_presentations WHERE ts = ?1 AND seq = ?2")
            let dropDerived = try connection.prepare(
                static: "DELETE FROM derived_presentations WHERE ts = ?1 AND seq = ?2")
            var rollup = DayRollup()
            let deadline = Clock.monotonicMicroseconds() + chunkMicroseconds
            var reached = cursor
            for seq in seqs {
                if reached > cursor, Clock.monotonicMicroseconds() >= deadline { break }
                reached = seq
                try select.bind(seq, at: 1)
                defer { select.reset() }
                guard try select.step(), let record = RecordQueries.record(from: select, user: "", offset: 2) else {
                    continue
                }
                if select.int64(0) == 1 || forwardedThrough.map({ seq > $0 }) == true {
                    heldDay = min(heldDay ?? .max, Timestamp.dayNumber(record.ts))
                    continue
                }
                let key = select.int64(1)
                if derived, case .presented(let offer, loaded: true) = record.body {
                    try derivedRow.bind(record.ts, at: 1)
                    try derivedRow.bind(seq, at: 2)
                    let eligible = try derivedRow.step() ? derivedRow.int64(0) != 0 : nil
                    derivedRow.reset()
                    if let eligible {
                        let fact = PresentationFact(id: record.id, ts: record.ts, offer: offer, eligible: eligible)
                        rollup.count(fact, sign: -1)
                        try dropDerived.bind(record.ts, at: 1)
                        try dropDerived.bind(seq, at: 2)
                        try dropDerived.run()
                    }
                }
                try dropRecordRow(seq)
                try SealedFacts.keep(id: record.id, ts: record.ts, key: key, hashKey: hashKey, on: connection)
            }
            try rollup.write(on: connection)
            return reached
        }
    }
}
