/// The outcome of a non-blocking read or write.
public enum IOResult: Sendable, Equatable {
    /// This many bytes were transferred (0 on read means end of stream).
    case transferred(Int)
    /// The call would block; wait for readiness.
    case wouldBlock
}
