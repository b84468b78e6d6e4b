extension String {
    /// Calls `body` with the string's UTF-8 bytes in contiguous memory: a native string's own storage (a small
    /// string's copied to the stack), an array copy otherwise. Scanning that buffer costs a fraction of iterating
    /// `utf8` one element at a time, which re-checks the string's representation at every byte.
    @inlinable
    public func withContiguousUTF8<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(utf8).withUnsafeBufferPointer(body)
    }
}
