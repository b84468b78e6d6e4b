import OfferTrackDomain
import Posix
import WireFormat

/// One client connection: its framer, its answers in input order, and its unsent output.
final class ClientConnection {
    let token: UInt64
    let fd: Int32
    var framer: LineFramer
    /// Answers in input order; nil while the record is with the writer.
    private var slots: [[UInt8]?] = []
    private var slotsHead = 0
    /// The slot number of `slots[slotsHead]`.
    private var firstSlotNumber: UInt64 = 0
    private(set) var output: [UInt8] = []
    private var outputHead = 0
    /// The client has ended its stream (read returned 0).
    var inputEnded = false
    /// Reading is paused (backpressure or shutdown).
    var readingPaused = false
    var lastProgressMilliseconds: Int64
    /// The events epoll currently watches for this connection.
    var watchedEvents: Epoll.Events = []
    /// Whether the descriptor has been added to epoll.
    var registered = false
    /// The peer has not read what was written to it (`Daemon.maxUnreadByPeer`): its answers wait in the socket.
    var peerIsBehind = false
    /// Answer bytes made and not yet written (in slots or in `output`), also counted in `budget`.
    private(set) var heldAnswerBytes = 0
    private let budget: AnswerBudget
    /// Whether the peer may send `review` records (SPEC 3.4, 8).
    let mayReview: Bool

    init(token: UInt64, fd: Int32, maxLineBytes: Int, budget: AnswerBudget, now: Int64, mayReview: Bool) {
        self.token = token
        self.fd = fd
        self.budget = budget
        self.mayReview = mayReview
        framer = LineFramer(maxLineBytes: maxLineBytes)
        lastProgressMilliseconds = now
    }

    deinit { budget.release(heldAnswerBytes) }

    /// Lines read whose answers are not yet fully written.
    var unansweredCount: Int { slots.count - slotsHead }
    var pendingOutputBytes: Int { output.count - outputHead }
    /// Nothing is waiting: every line read has been answered and written.
    var isQuiescent: Bool { unansweredCount == 0 && pendingOutputBytes == 0 }

    /// Reserves the next answer's place; returns its slot number.
    func reserveSlot() -> UInt64 {
        slots.append(nil)
        return firstSlotNumber + UInt64(slots.count - slotsHead - 1)
    }

    /// Appends an answer that is known at once (it still waits behind earlier pending ones).
    func answerImmediately(_ response: ResponseLine) {
        if slotsHead == slots.count {
            write(response)
            return
        }
        let encoded = response.encoded
        hold(encoded.count)
        slots.append(encoded)
        releaseReadyAnswers()
    }

    /// Fills slot `number` with its answer.
    func answer(slot number: UInt64, with response: ResponseLine) {
        guard number >= firstSlotNumber else { return }
        let index = slotsHead + Int(number - firstSlotNumber)
        guard index < slots.count else { return }
        if index == slotsHead {
            // The oldest answer waited for goes out at once, with any ready behind it.
            slotsHead += 1
            firstSlotNumber += 1
            write(response)
        } else {
            let encoded = response.encoded
            hold(encoded.count)
            slots[index] = encoded
        }
        releaseReadyAnswers()
    }

    /// Encodes an answer no earlier one waits for straight into the output (no buffer of its own).
    private func write(_ response: ResponseLine) {
        let start = output.count
        response.encode(into: &output)
        hold(output.count - start)
    }

    /// Moves the answered prefix of the slots into the output buffer.
    private func releaseReadyAnswers() {
        while slotsHead < slots.count, let ready = slots[slotsHead] {
            output.append(contentsOf: ready)
            slots[slotsHead] = nil
            slotsHead += 1
            firstSlotNumber += 1
        }
        if slotsHead > 1024 && slotsHead * 2 > slots.count {
            slots.removeFirst(slotsHead)
            slotsHead = 0
        }
    }

    /// Writes as much output as the socket takes. Returns false when the peer is gone.
    func flush(now: Int64) -> Bool {
        while outputHead < output.count {
            let result = Result { () throws(PosixError) in try FileDescriptor.write(fd, output[outputHead...]) }
            switch result {
            case .success(.transferred(let count)):
                outputHead += count
                heldAnswerBytes -= count
                budget.release(count)
                lastProgressMilliseconds = now
            case .success(.wouldBlock):
                compactOutput()
                return true
            case .failure:
                return false
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 1 << 16)
        outputHead = 0
        return true
    }

    private func hold(_ count: Int) {
        heldAnswerBytes += count
        budget.add(count)
    }

    private func compactOutput() {
        if outputHead > 1 << 16 {
            output.removeFirst(outputHead)
            outputHead = 0
        }
    }
}
