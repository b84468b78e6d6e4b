import JournalStore
import OfferTrackDomain

/// One stream message as SPEC section 10 defines it: one or more records of one partition, their lines as
/// journaled, each ending in `\n`, in the edge's `seq` order. The edge groups its journal into them
/// (`group`); the central reads them back line by line (`lines(of:)`), which also takes a single record's line
/// alone, with or without its `\n` (what edges published before batches).
public struct StreamBatch: Sendable, Equatable {
    public let partition: Int
    /// The `seq` of the first and the last record carried (the records between them of other partitions are in
    /// other messages).
    public let firstSeq: Int64
    public let lastSeq: Int64
    /// How many records it carries.
    public let records: Int
    /// The lines, each followed by `\n`.
    public let payload: [UInt8]

    /// Bytes of payload a message is kept under by default: half the servers' default `max_payload` (1 MiB),
    /// which headers count against too.
    public static let defaultMaxBytes = 512 << 10
    /// Records a message carries at most by default: a central commits a message's records together, and its
    /// commits hold at most 2,048 records by default (`--consume-batch`).
    public static let defaultMaxRecords = 1_024

    /// The message's `Nats-Msg-Id`: the edge journal (`ForwardingLog.journalID`), the `seq` range carried, and
    /// a 64-bit FNV-1a digest of the payload. The stream drops a message published again with the same id
    /// inside its duplicates window; the digest keeps two different messages from sharing an id (a journal
    /// restored from a backup journals other records under `seq`s it had already forwarded).
    public func messageID(journal: String) -> String {
        "\(journal):\(firstSeq)-\(lastSeq):\(Self.hex(Self.digest(payload)))"
    }

    /// Groups `entries` (consecutive journaled records, in `seq` order) by their user's partition into messages
    /// of at most `maxRecords` records and `maxBytes` of payload (a record longer than that alone in one),
    /// returned in the order of their first `seq`; within a partition they follow `seq` order.
    public static func group(
        _ entries: [ForwardingLog.Entry], partitionsTotal: Int, maxBytes: Int = defaultMaxBytes,
        maxRecords: Int = defaultMaxRecords
    ) -> [StreamBatch] {
        var open: [Int: Builder] = [:]
        var closed: [StreamBatch] = []
        for entry in entries {
            // A record an erasure renamed goes on the partition of the user it had (SPEC 11).
            let partition = entry.keptPartition ?? Partition.of(user: entry.user, total: partitionsTotal)
            if let builder = open[partition],
                builder.records >= maxRecords || builder.payload.count + entry.line.count + 1 > maxBytes
            {
                closed.append(builder.batch)
                open[partition] = nil
            }
            open[partition, default: Builder(partition: partition, firstSeq: entry.seq)].add(entry)
        }
        closed += open.values.map(\.batch)
        return closed.sorted { $0.firstSeq < $1.firstSeq }
    }

    private struct Builder {
        let partition: Int
        let firstSeq: Int64
        var lastSeq: Int64 = 0
        var records = 0
        var payload: [UInt8] = []

        init(partition: Int, firstSeq: Int64) {
            self.partition = partition
            self.firstSeq = firstSeq
        }

        mutating func add(_ entry: ForwardingLog.Entry) {
            payload += entry.line
            payload.append(newline)
            lastSeq = entry.seq
            records += 1
        }

        var batch: StreamBatch {
            StreamBatch(partition: partition, firstSeq: firstSeq, lastSeq: lastSeq, records: records, payload: payload)
        }
    }

    /// The lines a message's payload carries: the bytes before each `\n` (one trailing `\r` dropped, as the
    /// socket's framer does), and after the last `\n` whatever is left, unless nothing is. An empty payload is
    /// one empty line (not a record); so is an empty line between two others.
    public static func lines(of payload: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var start = payload.startIndex
        while let end = payload[start...].firstIndex(of: newline) {
            lines.append(line(payload[start..<end]))
            start = end + 1
        }
        if start < payload.endIndex || lines.isEmpty { lines.append(line(payload[start...])) }
        return lines
    }

    /// How many lines `lines(of:)` finds in `payload`, without copying them.
    public static func lineCount(_ payload: [UInt8]) -> Int {
        var count = 0
        for byte in payload where byte == newline { count += 1 }
        return payload.last == newline ? count : count + 1
    }

    private static func line(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        Array(bytes.last == carriageReturn ? bytes.dropLast() : bytes)
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    static func digest(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
