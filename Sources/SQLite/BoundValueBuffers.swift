/// A statement's own copies of the text and blob values bound to its parameters, which SQLite reads in place
/// (`SQLITE_STATIC`). Bound with `SQLITE_TRANSIENT`, SQLite allocates a copy of every value and frees it when the
/// parameter is next bound; here each parameter keeps one buffer, reused for its next values.
///
/// SQLite may read a parameter's copy until that parameter is bound again or cleared, or the statement is
/// finalized. So a copy is only overwritten just before its parameter is bound again (never while the statement
/// runs: see `Statement.bindCopy`), a buffer too small for the next value is freed only after its parameter no
/// longer points at it, and the rest only after the statement is finalized (`deallocate`).
struct BoundValueBuffers {
    /// Longer values are left to `SQLITE_TRANSIENT`: copying them costs more than the allocation saved, and a
    /// cached statement keeps its buffers for as long as its connection lives.
    static let largestKept = 4096

    private struct Buffer {
        var base: UnsafeMutableRawPointer?
        var capacity = 0
    }

    private let buffers: UnsafeMutablePointer<Buffer>
    private let count: Int

    /// Buffers for `parameters` parameters, each allocated when its first value is bound.
    init(parameters: Int) {
        count = max(parameters, 0)
        buffers = .allocate(capacity: count)
        buffers.initialize(repeating: Buffer(), count: count)
    }

    /// Copies `bytes` into the buffer of the 1-based parameter `index` and returns the copy; nil when the value is
    /// empty, longer than `largestKept` or `index` out of range, or when the buffer must grow and `unbind` (which
    /// must set the parameter to NULL, so SQLite stops pointing at the old buffer) fails.
    func copy(_ bytes: UnsafeRawBufferPointer, to index: Int32, unbind: () -> Bool) -> UnsafeRawPointer? {
        guard let source = bytes.baseAddress, bytes.count > 0, bytes.count <= Self.largestKept,
            index >= 1, Int(index) <= count
        else { return nil }
        let buffer = buffers + Int(index - 1)
        if buffer.pointee.capacity < bytes.count {
            if let old = buffer.pointee.base {
                guard unbind() else { return nil }
                old.deallocate()
                buffer.pointee = Buffer()
            }
            // Whole cache lines, so values growing a little do not reallocate each time.
            let capacity = (bytes.count + 63) & ~63
            buffer.pointee = Buffer(base: .allocate(byteCount: capacity, alignment: 16), capacity: capacity)
        }
        guard let base = buffer.pointee.base else { return nil }
        base.copyMemory(from: source, byteCount: bytes.count)
        return UnsafeRawPointer(base)
    }

    /// Frees every buffer: only once SQLite can no longer read them (the statement is finalized).
    func deallocate() {
        for index in 0..<count { buffers[index].base?.deallocate() }
        buffers.deinitialize(count: count)
        buffers.deallocate()
    }
}
