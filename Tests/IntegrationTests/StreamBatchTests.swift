import JournalStore
import OfferTrackDomain
import Testing

@testable import Fleet

/// The stream message of SPEC section 10 without a server: how an edge groups its journal into messages, how a
/// central reads their lines back, and how a central splits a fetch's records into commits.
struct StreamBatchTests {
    static func entry(_ seq: Int64, user: String, bytes: Int = 10) -> ForwardingLog.Entry {
        let line = #"{"id":"r\#(seq)","user":"\#(user)"}"#
        return ForwardingLog.Entry(
            seq: seq, id: "r\(seq)", user: user,
            line: Array(line.utf8) + [UInt8](repeating: UInt8(ascii: " "), count: max(0, bytes - line.utf8.count)),
            receivedAt: 0)
    }

    /// Users of partitions 0 and 1 of 4.
    static let users = (0..<2).map { partition in
        (0...).lazy.map { "u-\($0)" }.first { Partition.of(user: $0, total: 4) == partition } ?? ""
    }

    @Test func recordsAreGroupedByPartitionInSeqOrderUnderBothCaps() {
        // Seqs 1…10 alternating between partitions 0 and 1.
        let entries = (1...10).map { Self.entry(Int64($0), user: Self.users[($0 - 1) % 2], bytes: 30) }
        let one = StreamBatch.group(entries, partitionsTotal: 4)
        #expect(one.map(\.partition) == [0, 1])
        #expect(one.map(\.records) == [5, 5])
        #expect(one.map(\.firstSeq) == [1, 2] && one.map(\.lastSeq) == [9, 10])
        let lines = StreamBatch.lines(of: one[0].payload)
        #expect(lines == [1, 3, 5, 7, 9].map { entries[$0 - 1].line })
        #expect(one[0].payload.last == UInt8(ascii: "\n"))
        // At most 2 records, then at most 70 bytes (two 30-byte lines with their newlines fit, three do not).
        for split in [
            StreamBatch.group(entries, partitionsTotal: 4, maxRecords: 2),
            StreamBatch.group(entries, partitionsTotal: 4, maxBytes: 70),
        ] {
            #expect(split.map(\.records) == [2, 2, 2, 2, 1, 1])
            #expect(split.map(\.firstSeq) == [1, 2, 5, 6, 9, 10])
            #expect(split.map(\.lastSeq) == [3, 4, 7, 8, 9, 10])
        }
        // A record longer than the byte cap goes alone.
        let long = StreamBatch.group([Self.entry(1, user: Self.users[0], bytes: 100)], partitionsTotal: 4, maxBytes: 50)
        #expect(long.map(\.records) == [1])
    }

    @Test func theMessageIDNamesTheJournalTheSeqsAndTheBytes() {
        let entries = (1...4).map { Self.entry(Int64($0), user: Self.users[0]) }
        let batch = StreamBatch.group(entries, partitionsTotal: 4)[0]
        let id = batch.messageID(journal: "0123456789abcdef")
        #expect(id.hasPrefix("0123456789abcdef:1-4:") && id.count == "0123456789abcdef:1-4:".count + 16)
        #expect(StreamBatch.group(entries, partitionsTotal: 4)[0].messageID(journal: "0123456789abcdef") == id)
        // Other bytes under the same seqs (a journal restored from a backup) are another message.
        let other = (1...4).map { Self.entry(Int64($0), user: Self.users[0], bytes: 40) }
        #expect(StreamBatch.group(other, partitionsTotal: 4)[0].messageID(journal: "0123456789abcdef") != id)
    }

    @Test func aMessagesLinesWithOrWithoutTheLastNewline() {
        let a = Array("{a}".utf8)
        let b = Array("{b}".utf8)
        let newline = UInt8(ascii: "\n")
        #expect(StreamBatch.lines(of: a) == [a])
        #expect(StreamBatch.lines(of: a + [newline]) == [a])
        #expect(StreamBatch.lines(of: a + [UInt8(ascii: "\r"), newline]) == [a])
        #expect(StreamBatch.lines(of: a + [newline] + b) == [a, b])
        #expect(StreamBatch.lines(of: a + [newline] + b + [newline]) == [a, b])
        // An empty line between two records, and an empty message, are lines that are not records.
        #expect(StreamBatch.lines(of: a + [newline, newline] + b + [newline]) == [a, [], b])
        #expect(StreamBatch.lines(of: []) == [[]])
        for payload in [a, a + [newline], a + [newline] + b, a + [newline, newline] + b + [newline], []] {
            #expect(StreamBatch.lineCount(payload) == StreamBatch.lines(of: payload).count)
        }
    }

    @Test func commitsHoldWholeMessagesWhileTheyFitAndSplitTheLargerOnes() {
        // Messages of 2, 2, 0, 5 and 1 records, commits of at most 3.
        #expect(CentralConsumer.commitEnds([2, 4, 4, 9, 10], limit: 3) == [2, 4, 7, 10])
        #expect(CentralConsumer.commitEnds([2, 4, 4, 9, 10], limit: 100) == [10])
        #expect(CentralConsumer.commitEnds([7], limit: 3) == [3, 6, 7])
        #expect(CentralConsumer.commitEnds([0, 0], limit: 3) == [])
        #expect(CentralConsumer.commitEnds([3, 6], limit: 3) == [3, 6])
    }
}
