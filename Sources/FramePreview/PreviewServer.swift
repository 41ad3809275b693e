import Foundation
import FrameCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The live preview (FrameKit's counterpart of AVCaptureVideoPreviewLayer): a small HTTP/1.1
/// server on POSIX sockets serving
/// - `/` — a page with the live video (faces boxed), live stats and, with several devices,
///   buttons to switch between them;
/// - `/stream.mjpeg` — the video as `multipart/x-mixed-replace` JPEG frames;
/// - `/stats.json` — the current figures.
///
/// Safe defaults: binds 127.0.0.1; GET and HEAD only (405); nothing outside the fixed routes
/// (404, path tricks included); at most `maxClients` connections (503 beyond). A slow client
/// never stalls capture: publishing only replaces the latest frame, and each client is sent
/// the newest frame when it is ready for one (the frames in between are dropped for it).
public final class PreviewServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String = "127.0.0.1"
        /// 0 picks a free port (see ``port``).
        public var port: UInt16 = 8080
        public var maxClients: Int = 4
        /// Seconds a client may take to accept a frame before it is disconnected.
        public var sendTimeout: Double = 2
        public var title: String = "FrameKit preview"
        public init() {}
    }

    public enum ServerError: Error, CustomStringConvertible {
        case socket(SystemCallError)
        case badHost(String)
        public var description: String {
            switch self {
            case let .socket(e): "preview server: \(e)"
            case let .badHost(h): "preview server: '\(h)' is not an IPv4 address"
            }
        }
    }

    private struct Frame {
        var jpeg: [UInt8] = []
        var generation: UInt64 = 0
    }

    public let configuration: Configuration
    private let latest = Mutex(Frame())
    private let newFrame = NSCondition()
    private let statsJSON = Mutex("{}")
    private let clients = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let listener = Atomic<Int32>(-1)
    private let boundPort = Atomic<Int>(0)
    private let devices = Mutex<[String]>([])
    private let switcher = Mutex<(@Sendable (Int) -> Bool)?>(nil)
    private let acceptDone = DispatchSemaphore(value: 0)

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// The port actually bound (after ``start()``).
    public var port: Int { boundPort.load(ordering: .relaxed) }
    public var connectedClients: Int { clients.load(ordering: .relaxed) }

    /// Offers camera switching on the page: `names` as buttons; `handler(i)` switches to the
    /// i-th and says whether it worked.
    public func offerDevices(_ names: [String], switchTo handler: @escaping @Sendable (Int) -> Bool) {
        devices.withLock { $0 = names }
        switcher.withLock { $0 = handler }
    }

    /// Publishes a frame (JPEG bytes) to every client. Never blocks on clients.
    public func publish(jpeg: [UInt8]) {
        latest.withLock { f in
            f.jpeg = jpeg
            f.generation &+= 1
        }
        newFrame.broadcast()
    }

    /// Replaces what `/stats.json` serves.
    public func publish(statsJSON json: String) { statsJSON.withLock { $0 = json } }

    /// Binds and starts accepting connections on a thread of its own.
    public func start() throws(ServerError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .socket(SystemCallError(call: "socket", errno: errno)) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            close(fd)
            throw .badHost(configuration.host)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let e = errno
            close(fd)
            throw .socket(SystemCallError(call: "bind/listen \(configuration.host):\(configuration.port)", errno: e))
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        boundPort.store(Int(UInt16(bigEndian: actual.sin_port)), ordering: .relaxed)
        listener.store(fd, ordering: .relaxed)
        running.store(true, ordering: .relaxed)
        Thread.detachNewThread { [self] in
            acceptLoop(fd)
            acceptDone.signal()
        }
    }

    /// Stops accepting, ends every stream, closes the socket.
    public func stop() {
        guard running.exchange(false, ordering: .relaxed) else { return }
        newFrame.broadcast()
        acceptDone.wait()
        close(listener.load(ordering: .relaxed))
    }

    private func acceptLoop(_ fd: Int32) {
        while running.load(ordering: .relaxed) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let client = accept(fd, nil, nil)
            guard client >= 0 else { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            var timeout = timeval(tv_sec: Int(configuration.sendTimeout), tv_usec: Int((configuration.sendTimeout.truncatingRemainder(dividingBy: 1)) * 1e6))
            setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var readTimeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &readTimeout, socklen_t(MemoryLayout<timeval>.size))
            if clients.add(1, ordering: .relaxed).newValue > configuration.maxClients {
                _ = send(client, Self.response(503, "Service Unavailable", "text/plain", Array("too many clients\n".utf8), head: false))
                clients.subtract(1, ordering: .relaxed)
                close(client)
                continue
            }
            Thread.detachNewThread { [self] in
                handle(client)
                close(client)
                clients.subtract(1, ordering: .relaxed)
            }
        }
    }

    // MARK: Requests

    private func handle(_ fd: Int32) {
        guard let request = readRequest(fd) else { return }
        let parts = request.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else {
            _ = send(fd, Self.response(400, "Bad Request", "text/plain", Array("bad request\n".utf8), head: false))
            return
        }
        let (method, target) = (parts[0], parts[1])
        guard method == "GET" || method == "HEAD" else {
            _ = send(fd, Self.response(405, "Method Not Allowed", "text/plain", Array("GET or HEAD only\n".utf8), head: false,
                                       extra: "Allow: GET, HEAD\r\n"))
            return
        }
        let head = method == "HEAD"
        // Fixed routes only: the target is compared as it is, never mapped to a file.
        let path = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
        switch path {
        case "/":
            _ = send(fd, Self.response(200, "OK", "text/html; charset=utf-8", Array(page().utf8), head: head))
        case "/stats.json":
            let body = statsJSON.withLock { $0 } + "\n"
            _ = send(fd, Self.response(200, "OK", "application/json", Array(body.utf8), head: head))
        case "/stream.mjpeg":
            stream(fd, head: head)
        case _ where path.hasPrefix("/switch/"):
            guard let index = Int(path.dropFirst("/switch/".count)), let handler = switcher.withLock({ $0 }),
                  index >= 0, index < devices.withLock({ $0.count }) else {
                _ = send(fd, Self.response(404, "Not Found", "text/plain", Array("not found\n".utf8), head: head))
                return
            }
            let ok = handler(index)
            _ = send(fd, Self.response(ok ? 200 : 500, ok ? "OK" : "Internal Server Error", "application/json",
                                       Array("{\"switched\": \(ok)}\n".utf8), head: head))
        default:
            _ = send(fd, Self.response(404, "Not Found", "text/plain", Array("not found\n".utf8), head: head))
        }
    }

    /// The request line, once the whole header has arrived (at most 8 KiB).
    private func readRequest(_ fd: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 8192)
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + filled, $0.count - filled, 0) }
            if n <= 0 { return nil }
            filled += n
            if let end = Self.headerEnd(buffer[0..<filled]) {
                let header = String(decoding: buffer[0..<end], as: UTF8.self)
                return header.split(separator: "\r\n", maxSplits: 1).first.map(String.init)
            }
        }
        return nil
    }

    static func headerEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        var i = bytes.startIndex
        while i + 3 < bytes.endIndex {
            if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }

    private func stream(_ fd: Int32, head: Bool) {
        let header = "HTTP/1.1 200 OK\r\nContent-Type: multipart/x-mixed-replace; boundary=frame\r\nCache-Control: no-store\r\n"
            + "Connection: close\r\n\r\n"
        guard send(fd, Array(header.utf8)), !head else { return }
        var sent: UInt64 = 0
        while running.load(ordering: .relaxed) {
            // Wait for a frame newer than the last one this client got.
            newFrame.lock()
            var frame = latest.withLock { $0 }
            while frame.generation == sent && running.load(ordering: .relaxed) {
                _ = newFrame.wait(until: Date().addingTimeInterval(0.5))
                frame = latest.withLock { $0 }
            }
            newFrame.unlock()
            guard running.load(ordering: .relaxed), !frame.jpeg.isEmpty else { continue }
            sent = frame.generation
            let part = Array("--frame\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\n\r\n".utf8) + frame.jpeg + [13, 10]
            if !send(fd, part) { return } // gone, or slower than the send timeout
        }
    }

    /// Sends everything, or reports failure (closed, or the send timeout passed).
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    static func response(_ code: Int, _ reason: String, _ type: String, _ body: [UInt8], head: Bool, extra: String = "") -> [UInt8] {
        let header = "HTTP/1.1 \(code) \(reason)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\(extra)Connection: close\r\n\r\n"
        return Array(header.utf8) + (head ? [] : body)
    }

    private func page() -> String {
        let names = devices.withLock { $0 }
        let buttons = names.count > 1
            ? "<p id=\"devices\">Camera: " + names.enumerated().map { "<button onclick=\"fetch('/switch/\($0.offset)')\">\(escape($0.element))</button>" }.joined(separator: " ") + "</p>"
            : ""
        return """
        <!DOCTYPE html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(configuration.title))</title>
        <style>body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#eee}img{max-width:100%;display:block;background:#000}
        #stats{font-family:monospace;white-space:pre;margin-top:.6em}button{margin-right:.4em}</style></head>
        <body><h1>\(escape(configuration.title))</h1>\(buttons)
        <img id="video" src="/stream.mjpeg" alt="live video">
        <div id="stats">waiting for stats…</div>
        <script>
        async function refresh() {
          try { const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();
                document.getElementById('stats').textContent = Object.entries(s).map(([k, v]) => k + ': ' + JSON.stringify(v)).join('\\n'); }
          catch (e) {}
        }
        setInterval(refresh, 1000); refresh();
        </script></body></html>
        """
    }

    private func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
