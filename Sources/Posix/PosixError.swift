import Glibc

/// A failed system call: which function, and the errno it set.
public struct PosixError: Error, Sendable, Equatable, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    public init(_ function: String, errno: Int32) {
        self.function = function
        self.errno = errno
    }

    /// The error `function` just left in `errno` (call it before anything else can change `errno`).
    static func last(_ function: String) -> PosixError { PosixError(function, errno: Glibc.errno) }

    public var description: String { "\(function): \(String(cString: strerror(errno))) (errno \(errno))" }

    /// `EADDRINUSE`: another socket is bound to the address.
    public var isAddressInUse: Bool { errno == EADDRINUSE }
    /// `EEXIST`: the file exists already.
    public var isAlreadyExisting: Bool { errno == EEXIST }
    /// `EAGAIN`/`EWOULDBLOCK`: the call would block (or a socket timeout passed).
    public var isWouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }

    /// `ENOTCONN` from `function`: the socket is not connected.
    public static func notConnected(_ function: String) -> PosixError { PosixError(function, errno: ENOTCONN) }
    /// `EAGAIN` from `function`: a blocking call's timeout passed.
    public static func timedOut(_ function: String) -> PosixError { PosixError(function, errno: EAGAIN) }
}

/// The one place that runs a system call returning -1 (or a negative value) and setting `errno` on failure:
/// retries on EINTR unless `retryOnInterrupt` is false (a `connect` or `bind` must not simply be repeated), and
/// throws the errno, named by `function`, otherwise.
@inline(__always)
func valueOrErrno<T: FixedWidthInteger>(
    _ function: String, retryOnInterrupt: Bool = true, _ call: () -> T
) throws(PosixError) -> T {
    while true {
        let result = call()
        if result >= 0 { return result }
        let code = Glibc.errno
        if code == EINTR && retryOnInterrupt { continue }
        throw PosixError(function, errno: code)
    }
}
