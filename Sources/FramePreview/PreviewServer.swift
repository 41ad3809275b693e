import Foundation
import FrameCore
import FrameStats
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The live preview (FrameKit's counterpart of AVCaptureVideoPreviewLayer): a small HTTP/1.1
/// server on POSIX sockets serving
/// - `/` — a page with the live video (faces boxed), live stats and, with several devices,
///   buttons to switch between them;
/// - `/stream.mp4` — the video as H.264 in fragmented MP4, for Media Source Extensions: one
///   encode (``PreviewFeed``'s) shared by every viewer, a viewer starting at a key frame (one is
///   made when it joins) and one that falls behind skipping to the next, never queued for;
/// - `/stream.mjpeg` — the video as `multipart/x-mixed-replace` JPEG frames (the page's
///   fallback where a browser has no MSE or no H.264);
/// - `/faces.ndjson` — the faces of the H.264 stream's frames as they come (a JSON line a
///   frame: its time on the stream's timeline, its capture time, its boxes), which the page
///   draws over the frame they were found in; `/faces.json?after=T`, the same polled;
/// - `/stats.json` — the current figures.
///
/// Safe defaults (docs/outputs.md): binds 127.0.0.1; GET and HEAD for the pages, POST (with a
/// same-origin check) for the state changes; nothing outside the fixed routes (404, path
/// tricks included); the `Host` header must name this server (the bound address, `localhost`,
/// `127.0.0.1`, `[::1]`, or a name in ``Configuration/allowedHosts``: DNS rebinding gets 421); a request head must
/// arrive whole within ``Configuration/requestTimeout`` (408) and within size limits (414,
/// 431); at most ``Configuration/maxClients`` streams and, separately,
/// ``Configuration/maxPendingRequests`` connections still sending their request, read by one
/// thread with `poll` (beyond that, one of the host holding the most is dropped with 503, so
/// idle connections never lock out a client that sends its request): open streams never lock out `/` or
/// `/stats.json`. A slow client never stalls capture:
/// publishing only replaces the latest frame, and each client is sent the newest frame when
/// it is ready for one (the frames in between are dropped for it).
public final class PreviewServer: Sendable {
    public struct Configuration: Sendable {
        public var host: String = "127.0.0.1"
        /// 0 picks a free port (see ``port``).
        public var port: UInt16 = 8080
        /// Video streams served at once.
        public var maxClients: Int = 4
        /// Connections still sending their request head, at once (slow or idle clients); at the
        /// limit one of the host holding the most is dropped for a new one (its oldest silent
        /// one, else its oldest after half a second).
        public var maxPendingRequests: Int = 256
        /// Seconds a client has to send its whole request head.
        public var requestTimeout: Double = 5
        /// Seconds a client may take to accept a frame before it is disconnected.
        public var sendTimeout: Double = 2
        /// Host names (besides the bound address and `localhost`) a request's `Host` may give.
        public var allowedHosts: [String] = []
        public var title: String = "FrameKit preview"
        /// Serve the page, the stream and /stats.json; false for a server that answers only
        /// /metrics and /healthz (``offerMetrics(text:healthy:)``).
        public var servesPages = true
        /// Refuse a `Host` that does not name this server (DNS rebinding). A metrics-only server
        /// turns it off: scrapers name the pod's address, and there is nothing to change there.
        public var checksHost = true
        /// Where the server reports trouble (out of file descriptors…); nil: stderr.
        public var log: (@Sendable (String) -> Void)? = nil
        public init() {}
    }

    public enum ServerError: Error, CustomStringConvertible {
        case socket(SystemCallError)
        case badHost(String)
        public var description: String {
            switch self {
            case .socket(let e): "\(e)"
            case .badHost(let h): "'\(h)' is not an IPv4 address"
            }
        }
    }

    struct Frame {
        var jpeg: [UInt8] = []
        var generation: UInt64 = 0
    }

    public let configuration: Configuration
    let latest = Mutex(Frame())
    let newFrame = NSCondition()
    let statsJSON = Mutex("{}")
    let clients = Atomic<Int>(0) // streams
    let viewerList = PreviewViewers()
    let keyFrameWanted = Atomic<Bool>(false)
    let video = VideoFragmentRing()
    let faceTimeline = VideoFaceTimeline()
    let facesClients = Atomic<Int>(0)
    let running = Atomic<Bool>(false)
    private let listener = Atomic<Int32>(-1)
    private let boundPort = Atomic<Int>(0)
    let devices = Mutex<[String]>([])
    let switcher = Mutex<(@Sendable (Int) -> Bool)?>(nil)
    let controlHandlers = Mutex<PreviewRoutes.ControlHandlers?>(nil)
    let metricsRoutes = Mutex<MetricsRoutes?>(nil)
    private let acceptDone = DispatchSemaphore(value: 0)

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Whether `host` is an IPv4 address the server can bind (checked again by ``start()``; a
    /// caller checks it first to refuse a typo before opening anything else).
    public static func isIPv4Address(_ host: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, host, &address) == 1
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

    /// Offers the camera's controls on the page: `GET /controls.json` answers `list()`;
    /// `POST /control/KEY/VALUE` (same origin, from a loopback peer only, whatever address the
    /// server is bound to) calls `set(key, value)`.
    public func offerControls(
        list: @escaping @Sendable () -> String, set: @escaping @Sendable (_ key: String, _ value: String) -> (ok: Bool, json: String)
    ) {
        controlHandlers.withLock { $0 = PreviewRoutes.ControlHandlers(list: list, set: set) }
    }

    /// Serves `GET /metrics` (`text()`, Prometheus' text format) and `GET /healthz` (200 while
    /// `healthy()`, else 503), for schedulers and scrapers.
    public func offerMetrics(text: @escaping @Sendable () -> String, healthy: @escaping @Sendable () -> Bool) {
        metricsRoutes.withLock { $0 = MetricsRoutes(text: text, healthy: healthy) }
    }

    /// Publishes a frame (JPEG bytes) to every client. Never blocks on clients. The condition's
    /// lock is held while the frame is replaced, so no waiting stream misses the signal.
    public func publish(jpeg: [UInt8]) {
        newFrame.lock()
        latest.withLock { f in
            f.jpeg = jpeg
            f.generation &+= 1
        }
        newFrame.broadcast()
        newFrame.unlock()
    }

    /// Whether a client watches the MJPEG stream (no JPEG need be made for nobody).
    public var hasMJPEGViewers: Bool { viewerList.count(of: .mjpeg) > 0 }
    /// Whether a client watches the H.264 stream.
    public var hasVideoViewers: Bool { viewerList.count(of: .h264) > 0 }
    /// The clients watching a stream now, with what each was sent and skipped.
    public var viewers: [PreviewViewer] { viewerList.all }

    /// Whether a viewer joined since the last call: the next frame should be a key frame.
    package func takeKeyFrameRequest() -> Bool { keyFrameWanted.exchange(false, ordering: .relaxed) }

    /// Starts a new H.264 stream (the first, or one at a new size): its init segment and codec
    /// string. Viewers are sent it, then its fragments from a key frame.
    package func publish(videoHeader header: [UInt8], codec: String) {
        newFrame.lock()
        faceTimeline.reset()
        video.publish(header: header, codec: codec)
        newFrame.broadcast()
        newFrame.unlock()
    }

    /// The faces of the H.264 stream's frame at `time` on its timeline (published before the
    /// frame's fragment), captured at `capture` (wall-clock milliseconds modulo 2³²): what
    /// `/faces.json` gives the page to draw over that frame.
    package func publish(videoFaces faces: [Rect], at time: Double, capture: UInt32) {
        newFrame.lock()
        faceTimeline.publish(VideoFaceTimeline.Entry(time: time, capture: capture, faces: faces))
        newFrame.broadcast()
        newFrame.unlock()
    }

    /// One frame of the H.264 stream (a fragment: moof + mdat). Never blocks on viewers.
    package func publish(videoFragment fragment: [UInt8], isKey: Bool) {
        newFrame.lock()
        video.publish(fragment: fragment, isKey: isKey)
        newFrame.broadcast()
        newFrame.unlock()
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
        // The kernel's largest accept queue (net.core.somaxconn, 4096 on Linux 5.4+): with 128,
        // a flood of connections filled it and a prompt client's SYN was dropped, costing it the
        // 1 s (then 3 s) retransmit before it was even accepted.
        guard bound == 0, listen(fd, SOMAXCONN) == 0, fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 else {
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
            // Named so it can be found in /proc (tests, `top -H`): Linux takes a thread's name
            // from a write to its own comm file.
            let name = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            if name >= 0 {
                _ = Array("fk-preview-acc".utf8).withUnsafeBytes { Glibc.write(name, $0.baseAddress!, $0.count) }
                close(name)
            }
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

    /// A connection whose request head is still arriving.
    private struct Waiting {
        let fd: Int32
        /// The peer's address (no port): at the limit, the peer holding the most connections
        /// gives one up, so a flood from one host does not push out another's clients.
        let peer: [UInt8]
        let accepted: Date
        let deadline: Date
        var bytes: [UInt8] = []

        /// Whether the parser has anything new to decide now that `count` more bytes came: a
        /// line ended (at most 65 before the head is whole or refused), or a size limit was
        /// crossed. Not once per byte: a client sending a byte at a time costs linear time on
        /// this one thread, not quadratic.
        func worthParsing(after count: Int) -> Bool {
            let old = bytes.count - count
            if (old <= 8192 && bytes.count > 8192) || (old <= 16384 && bytes.count > 16384) { return true }
            return bytes[old...].contains(10)
        }
    }

    /// How long a connection that has sent part of a request must have waited before a
    /// newcomer may push it out: a client part-way through its head is read, not dropped for
    /// every newcomer. One that has sent nothing has no such claim.
    private static let evictableAfter = 0.5

    /// Reads what `client` has sent without waiting: whether it closed (or failed), and whether
    /// its head is now complete (then it is answered on a thread of its own and leaves the list).
    private func readAvailable(_ client: inout Waiting, into chunk: inout [UInt8]) -> (gone: Bool, answered: Bool) {
        let fd = client.fd
        let n: Int
        do {
            n = try retryingSystemCall("recv") {
                let r = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT)) }
                return (r, errno)
            }
        } catch  where error.errno == EAGAIN || error.errno == EWOULDBLOCK {
            return (false, false) // nothing more yet
        } catch {
            n = 0 // reset
        }
        if n == 0 { // closed by the client, or reset
            close(fd)
            return (true, false)
        }
        client.bytes += chunk[0..<n]
        let outcome = client.worthParsing(after: n) ? HTTPRequest.parse(client.bytes[...]) : .incomplete
        guard outcome != .incomplete else { return (false, false) }
        Thread.detachNewThread { [self] in
            respond(fd, outcome)
            close(fd)
        }
        return (false, true)
    }

    /// Which waiting connection gives up its place to a newcomer from `peer`, if any: one of
    /// the peer holding the most connections (the newcomer's counted), the oldest that has sent
    /// nothing, else its oldest once that has waited ``evictableAfter``.
    private static func evictee(_ waiting: [Waiting], newcomer peer: [UInt8], now: Date) -> Int? {
        var counts: [[UInt8]: Int] = [peer: 1]
        for client in waiting { counts[client.peer, default: 0] += 1 }
        guard let heaviest = counts.max(by: { $0.value < $1.value })?.key else { return nil }
        let theirs = waiting.indices.filter { waiting[$0].peer == heaviest }
        if let silent = theirs.first(where: { waiting[$0].bytes.isEmpty }) { return silent }
        guard let oldest = theirs.first, now.timeIntervalSince(waiting[oldest].accepted) >= evictableAfter else { return nil }
        return oldest
    }

    /// Accepts connections and reads their request heads, all on this one thread with `poll`: an
    /// idle or slow client costs a descriptor and its bytes so far, not a thread, so a flood of
    /// them (slowloris) cannot starve the server. A newcomer's request is read as it is accepted;
    /// at ``Configuration/maxPendingRequests`` one connection of the host holding the most gives
    /// way (``evictee(_:newcomer:now:)``), so an idle flood never locks out a client that sends
    /// its request promptly. Each complete request is answered on a thread of its own.
    private func acceptLoop(_ listener: Int32) {
        var outOfDescriptors = false
        var waiting: [Waiting] = [] // oldest first
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { for client in waiting { close(client.fd) } }
        while running.load(ordering: .relaxed) {
            var polled = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            polled += waiting.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let count = nfds_t(polled.count)
            do { _ = try retryingSystemCall("poll") { (Int(poll(&polled, count, 100)), errno) } } catch {
                Thread.sleep(forTimeInterval: 0.01) // a lasting failure must not spin
                continue
            }
            let now = Date()
            var still: [Waiting] = []
            still.reserveCapacity(waiting.count + 1)
            for (index, var client) in waiting.enumerated() {
                if polled[index + 1].revents != 0 {
                    let (gone, answered) = readAvailable(&client, into: &chunk)
                    if gone || answered { continue }
                }
                if now >= client.deadline {
                    refuse(client.fd, 408, "request timeout")
                    continue
                }
                still.append(client)
            }
            waiting = still
            guard polled[0].revents & Int16(POLLIN) != 0 else { continue }
            // The listener is non-blocking: take what has queued up, a bounded batch at a time.
            for _ in 0..<64 {
                var address = sockaddr_storage()
                var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let client: Int32
                do {
                    client = Int32(
                        try retryingSystemCall("accept") {
                            let r = withUnsafeMutablePointer(to: &address) {
                                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
                            }
                            return (Int(r), errno)
                        })
                } catch {
                    let errno = error.errno
                    if errno == EAGAIN || errno == EWOULDBLOCK { break }
                    // Out of file descriptors: free one by dropping a connection that has had its
                    // chance; with none, back off (the listening socket stays readable, so retrying
                    // at once would spin) and say so once per episode. Any other failure: a pause.
                    if errno == EMFILE || errno == ENFILE, let oldest = waiting.first,
                        now.timeIntervalSince(oldest.accepted) >= Self.evictableAfter
                    {
                        refuse(oldest.fd, 503, "too many clients")
                        waiting.removeFirst()
                    } else if errno == EMFILE || errno == ENFILE {
                        if !outOfDescriptors { report("framekit preview: out of file descriptors; new clients wait") }
                        outOfDescriptors = true
                        Thread.sleep(forTimeInterval: 0.2)
                    } else {
                        Thread.sleep(forTimeInterval: 0.01)
                    }
                    break
                }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                if outOfDescriptors {
                    report("framekit preview: accepting clients again")
                    outOfDescriptors = false
                }
                Self.setSendTimeout(client, configuration.sendTimeout)
                var newcomer = Waiting(
                    fd: client, peer: Self.host(of: address), accepted: now, deadline: now.addingTimeInterval(configuration.requestTimeout))
                // A prompt client's request is usually in the socket before it is accepted:
                // answered now, it never competes for a place (an idle flood refused 15 of 19
                // prompt probes when every newcomer had to wait its turn in the list).
                let (gone, answered) = readAvailable(&newcomer, into: &chunk)
                if gone || answered { continue }
                if waiting.count >= max(configuration.maxPendingRequests, 1) {
                    guard let index = Self.evictee(waiting, newcomer: newcomer.peer, now: now) else {
                        refuse(client, 503, "too many clients")
                        continue
                    }
                    refuse(waiting[index].fd, 503, "too many clients")
                    waiting.remove(at: index)
                }
                waiting.append(newcomer)
            }
        }
    }

    /// The address bytes of an accepted peer, without its port.
    private static func host(of address: sockaddr_storage) -> [UInt8] {
        let family = Int32(address.ss_family)
        return withUnsafeBytes(of: address) { raw in
            switch family {
            case AF_INET: return Array(raw[4..<8]) // sockaddr_in: family, port, then the address
            case AF_INET6: return Array(raw[8..<24]) // sockaddr_in6: family, port, flow info, address
            default: return []
            }
        }
    }

    /// A short refusal from the accepting thread, which must never wait on a client: the few
    /// bytes go into the socket's buffer or not at all; then the connection is closed.
    private func refuse(_ fd: Int32, _ status: Int, _ reason: String) {
        let response = HTTPResponse.make(status, HTTPResponse.reasonPhrase(status), "text/plain", Array((reason + "\n").utf8), head: false)
        _ = response.withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
        close(fd)
    }

    private func report(_ line: String) {
        if let log = configuration.log { return log(line) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress!, $0.count) }
    }
}
