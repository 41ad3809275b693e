import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A bare HTTP/1.1 client on POSIX sockets, so tests see exactly what a server sends.
public final class RawHTTP {
    public private(set) var fd: Int32

    /// Connects to `address`:`port`, from `source` (another loopback address: another host, as
    /// the server sees it) when given.
    public init(port: Int, address: String = "127.0.0.1", source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard source.map({ Self.ipv4(fd, $0, port: 0, bind) == 0 }) ?? true, Self.ipv4(fd, address, port: port, connect) == 0 else {
            Glibc.close(fd)
            throw CocoaError(.fileReadNoPermission)
        }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Calls `bind` or `connect` on `fd` with the IPv4 `address` and `port`.
    public static func ipv4(
        _ fd: Int32, _ address: String, port: Int, _ call: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = UInt16(port).bigEndian
        socketAddress.sin_addr.s_addr = inet_addr(address)
        return withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    deinit { close() }

    /// Closes the connection (as a browser closing its tab).
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends raw bytes.
    public func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    public func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until `count` bytes have arrived, the peer closes, or the timeout passes.
    public func read(atMost count: Int = 1 << 22) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while out.count < count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, min($0.count, count - out.count), 0) }
            if n <= 0 { break }
            out += buffer[0..<n]
        }
        return out
    }

    /// Reads whatever arrives for `seconds` (a stream that does not end), or until the peer closes.
    public func read(for seconds: Double) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) >= 0 else { break }
            guard p.revents != 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT)) }
            if n == 0 { break }
            if n > 0 { out += buffer[0..<n] }
        }
        return out
    }

    /// One request on a fresh connection: status code, header text and body.
    public static func request(
        port: Int, _ method: String, _ path: String, headers: String = "Host: 127.0.0.1\r\n", address: String = "127.0.0.1"
    ) throws -> (status: Int, headers: String, body: [UInt8]) {
        let client = try RawHTTP(port: port, address: address)
        client.send("\(method) \(path) HTTP/1.1\r\n\(headers)\r\n")
        let raw = client.read()
        return split(raw)
    }

    /// This machine's first IPv4 address that is not loopback, if it has one.
    public static func nonLoopbackAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var cursor = list
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let a = entry.pointee.ifa_addr, a.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            let ip = a.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt32(bigEndian: $0.pointee.sin_addr.s_addr) }
            if ip >> 24 != 127 { return "\(ip >> 24).\(ip >> 16 & 255).\(ip >> 8 & 255).\(ip & 255)" }
        }
        return nil
    }

    public static func split(_ raw: [UInt8]) -> (status: Int, headers: String, body: [UInt8]) {
        var end = 0
        while end + 3 < raw.count && !(raw[end] == 13 && raw[end + 1] == 10 && raw[end + 2] == 13 && raw[end + 3] == 10) { end += 1 }
        let headers = String(decoding: raw[0..<min(end, raw.count)], as: UTF8.self)
        let status = Int(headers.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, headers, end + 4 <= raw.count ? Array(raw[(end + 4)...]) : [])
    }
}
