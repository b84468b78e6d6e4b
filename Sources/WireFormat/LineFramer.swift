import OfferTrackDomain

/// Splits a byte stream into lines per SPEC section 2's framing.
///
/// A line is the bytes before `\n`; the limit counts them all, a trailing `\r` included. A line over the limit
/// is reported once (`tooLong`) as soon as it is known to be too long, and its bytes are discarded up to the
/// next `\n`. One trailing `\r` is dropped from every line; a line empty after that is skipped. At the end of
/// the stream a final unterminated line is delivered.
public struct LineFramer: Sendable {
    /// What the framer found.
    public enum Event: Equatable, Sendable {
        case line([UInt8])
        case tooLong
    }

    public let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var discarding = false

    public init(maxLineBytes: Int) { self.maxLineBytes = maxLineBytes }

    /// The number of bytes held for an incomplete line.
    public var bufferedByteCount: Int { partial.count }

    /// Feeds `chunk` until `emit` returns false (as the pointer version below); returns how many bytes it took.
    public mutating func append(_ chunk: ArraySlice<UInt8>, until emit: (Event) -> Bool) -> Int {
        chunk.withUnsafeBytes { append($0, until: emit) }
    }

    /// Feeds `chunk`, calling `emit` for every complete line or over-long line, in order.
    mutating func append(_ chunk: UnsafeRawBufferPointer, emit: (Event) -> Void) {
        _ = append(chunk) { event -> Bool in
            emit(event)
            return true
        }
    }

    /// Feeds `chunk` until `emit` returns false; returns how many bytes it took: all of them, or those up to and
    /// including the `\n` that ended the line `emit` stopped at. The caller feeds the rest later, so a reader
    /// can stop after any line (its answers are bounded per line, not per chunk).
    mutating func append(_ chunk: UnsafeRawBufferPointer, until emit: (Event) -> Bool) -> Int {
        var start = 0
        let count = chunk.count
        while start < count {
            guard let newline = firstNewline(in: chunk, from: start) else {
                appendPartial(chunk, from: start, to: count) { _ = emit($0) }
                return count
            }
            var proceed = true
            if discarding {
                discarding = false
            } else if partial.count + (newline - start) > maxLineBytes {
                partial.removeAll(keepingCapacity: true)
                proceed = emit(.tooLong)
            } else if partial.isEmpty {
                deliver(Array(chunk[start..<newline])) { proceed = emit($0) }
            } else {
                partial.append(contentsOf: chunk[start..<newline])
                let line = partial
                partial.removeAll(keepingCapacity: true)
                deliver(line) { proceed = emit($0) }
            }
            start = newline + 1
            if !proceed { return start }
        }
        return count
    }

    /// Feeds `bytes` (a convenience for tests and tools).
    public mutating func append(_ bytes: [UInt8], emit: (Event) -> Void) {
        bytes.withUnsafeBytes { append($0, emit: emit) }
    }

    /// Ends the stream: delivers a final unterminated line, if any.
    public mutating func finish(emit: (Event) -> Void) {
        if !discarding && !partial.isEmpty { deliver(partial, emit: emit) }
        partial = []
        discarding = false
    }

    private mutating func appendPartial(
        _ chunk: UnsafeRawBufferPointer, from start: Int, to end: Int, emit: (Event) -> Void
    ) {
        guard !discarding else { return }
        if partial.count + (end - start) > maxLineBytes {
            partial = []
            discarding = true
            emit(.tooLong)
        } else {
            partial.append(contentsOf: chunk[start..<end])
        }
    }

    private func deliver(_ line: [UInt8], emit: (Event) -> Void) {
        var line = line
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        if !line.isEmpty { emit(.line(line)) }
    }

    /// The offset of the first `\n` in `chunk` from `start` on, read eight bytes at a time (`ByteWord`).
    private func firstNewline(in chunk: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = chunk.baseAddress else { return nil }
        var index = start
        while index + 8 <= chunk.count {
            let newlines = ByteWord.bytes(of: ByteWord.load(base, at: index), equalTo: UInt8(ascii: "\n"))
            if newlines != 0 { return index + ByteWord.firstFlagged(newlines) }
            index += 8
        }
        while index < chunk.count {
            if chunk[index] == UInt8(ascii: "\n") { return index }
            index += 1
        }
        return nil
    }
}
