import OfferTrackDomain
import Testing
import WireFormat

@testable import OfferTrackDaemon

/// One connection's answers leave in the order its lines came, whichever is known first: rejections at once,
/// commits when the writer answers.
@Suite struct ClientConnectionTests {
    static func connection(budget: AnswerBudget) -> ClientConnection {
        // No descriptor: the tests read `output`, they never flush.
        ClientConnection(token: 16, fd: -1, maxLineBytes: 64, budget: budget, now: 0, mayReview: false)
    }

    static func answers(_ connection: ClientConnection) -> [String] {
        String(decoding: connection.output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    static let rejection = ResponseLine.rejected(id: nil, RecordError(.invalidJSON, "not JSON"))

    /// What happens, in order: `.line(committed: Bool)` reads a line (committed ones wait for the writer), and
    /// `.commit(n)` answers the n-th committed line; then the answers written, as ids ("-" for a rejection).
    enum Step: Sendable, CustomStringConvertible {
        case committedLine
        case rejectedLine
        case commit(Int)
        var description: String {
            switch self {
            case .committedLine: "committed line"
            case .rejectedLine: "rejected line"
            case .commit(let n): "commit \(n)"
            }
        }
    }

    static let cases: [([Step], [[String]])] = [
        // A rejection waits behind an earlier line still with the writer.
        ([.committedLine, .rejectedLine, .commit(0)], [[], [], ["c0", "-"]]),
        // Commits answered out of order are written in input order.
        ([.committedLine, .committedLine, .commit(1), .commit(0)], [[], [], [], ["c0", "c1"]]),
        // Nothing waits before a rejection: it goes out at once.
        ([.rejectedLine, .committedLine, .rejectedLine, .commit(0)], [["-"], ["-"], ["-"], ["-", "c0", "-"]]),
        (
            [.committedLine, .rejectedLine, .committedLine, .commit(1), .rejectedLine, .commit(0)],
            [[], [], [], [], [], ["c0", "-", "c1", "-"]]
        ),
    ]

    @Test(arguments: cases)
    func answersLeaveInInputOrder(steps: [Step], expected: [[String]]) {
        let budget = AnswerBudget(limit: 1 << 20)
        let connection = Self.connection(budget: budget)
        var slots: [UInt64] = []
        for (step, written) in zip(steps, expected) {
            switch step {
            case .committedLine: slots.append(connection.reserveSlot())
            case .rejectedLine: connection.answerImmediately(Self.rejection)
            case .commit(let n): connection.answer(slot: slots[n], with: .accepted(id: "c\(n)", seq: Int64(n + 1)))
            }
            let ids = Self.answers(connection).map { line in
                line.contains(#""status":"rejected""#) ? "-" : String(line.split(separator: "\"")[3])
            }
            #expect(ids == written, "after \(step)")
        }
        #expect(connection.unansweredCount == 0)
    }

    @Test func answerBytesCountAgainstTheBudgetUntilTheConnectionGoes() {
        let budget = AnswerBudget(limit: 1 << 20)
        var connection: ClientConnection? = Self.connection(budget: budget)
        let slot = connection?.reserveSlot()
        connection?.answerImmediately(Self.rejection)
        let rejectionBytes = Self.rejection.encoded.count
        #expect(budget.bytes == rejectionBytes && connection?.heldAnswerBytes == rejectionBytes)
        connection?.answer(slot: slot ?? 0, with: .duplicate(id: "d", seq: 7))
        #expect(budget.bytes == rejectionBytes + ResponseLine.duplicate(id: "d", seq: 7).encoded.count)
        #expect(connection?.pendingOutputBytes == budget.bytes)
        connection = nil
        #expect(budget.bytes == 0)
    }

    @Test func anAnswerForAnUnknownSlotIsIgnored() {
        let connection = Self.connection(budget: AnswerBudget(limit: 1 << 20))
        connection.answer(slot: 5, with: .accepted(id: "x", seq: 1))
        #expect(connection.output.isEmpty && connection.isQuiescent)
    }
}
