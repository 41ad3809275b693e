import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 that nothing holds, as the kernel picks one for a bind to port 0:
/// for the servers tests start (ffmpeg's listener, `--metrics`, GStreamer's RTSP server).
/// Ports drawn at random from 20000–60000 collided now and then with the suites' own
/// connections, whose local ports come from the same range; the server's bind then failed and
/// the test waited for an answer that never came.
public enum FreePort {
    public static func next() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket: errno \(errno)")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        precondition(bound, "bind or getsockname: errno \(errno)")
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
