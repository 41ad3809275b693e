#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A system call failed: which call, and the `errno` it left.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call's name, with its request for ioctls (`ioctl(VIDIOC_DQBUF)`).
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The one door for system calls: retries `EINTR`, and otherwise turns a failure into a
/// ``SystemCallError`` carrying errno and the call's name.
///
/// `body` returns the call's result and the errno read right after it, so nothing in between
/// can clobber errno.
@inline(never)
public func retryingSystemCall(
    _ call: @autoclosure () -> String,
    _ body: () -> (result: Int, errno: Int32)
) throws(SystemCallError) -> Int {
    while true {
        let (result, error) = body()
        if result != -1 { return result }
        if error == EINTR { continue }
        throw SystemCallError(call: call(), errno: error)
    }
}
