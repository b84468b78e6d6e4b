import Glibc

/// A failed system call: which function, and the errno it set.
public struct PosixError: Error, Sendable, Equatable, CustomStringConvertible {
    public let function: String
    public let errno: Int32

    public init(_ function: String, errno: Int32) {
        self.function = function
        self.errno = errno
    }

    public var description: String { "\(function): \(String(cString: strerror(errno))) (errno \(errno))" }

    /// `EADDRINUSE`: another socket is bound to the address.
    public var isAddressInUse: Bool { errno == EADDRINUSE }
}

/// The one place that runs a system call returning -1 on failure: retries on EINTR and throws otherwise.
@inline(__always)
func retryingOnInterrupt<T: FixedWidthInteger>(_ function: String, _ call: () -> T) throws(PosixError) -> T {
    while true {
        let result = call()
        if result != -1 { return result }
        let code = Glibc.errno
        if code == EINTR { continue }
        throw PosixError(function, errno: code)
    }
}
