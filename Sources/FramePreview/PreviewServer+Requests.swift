import Foundation
import FrameCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The preview's answers to requests: a page or figure from `PreviewRoutes`, or a stream
/// (MJPEG, H.264 in fragmented MP4, faces) run within the client limit, and the bounded send
/// every answer goes through.
extension PreviewServer {
    /// Answers one request: what to answer is ``PreviewRoutes``' (no socket there); sending it,
    /// and running a stream within the client limit, is this server's.
    func respond(_ fd: Int32, _ outcome: HTTPRequest.Outcome) {
        let routes = PreviewRoutes(
            configuration: configuration, devices: devices.withLock { $0 }, switcher: switcher.withLock { $0 },
            controls: controlHandlers.withLock { $0 }, metrics: metricsRoutes.withLock { $0 },
            statsJSON: { self.statsJSON.withLock { $0 } },
            facesJSON: { self.faceTimeline.json(after: $0) }
        )
        switch routes.reply(to: outcome, peerIsLoopback: { Self.peerIsLoopback(fd) }) {
        case nil: return
        case .bytes(let response): _ = send(fd, response)
        case .stream(let head): withinClientLimit(fd, head: head) { stream(fd, head: head) }
        case .videoStream(let head): withinClientLimit(fd, head: head) { videoStream(fd, head: head) }
        case .facesStream(let head):
            // Beside a video stream, so limited as many of them may be, on a count of its own.
            guard facesClients.add(1, ordering: .relaxed).newValue <= configuration.maxClients else {
                facesClients.subtract(1, ordering: .relaxed)
                _ = send(fd, HTTPResponse.make(503, "Service Unavailable", "text/plain", Array("too many streams\n".utf8), head: head))
                return
            }
            facesStream(fd, head: head)
            facesClients.subtract(1, ordering: .relaxed)
        }
    }

    /// Runs a stream if there is room for one more (``Configuration/maxClients``), else answers 503.
    private func withinClientLimit(_ fd: Int32, head: Bool, _ stream: () -> Void) {
        guard clients.add(1, ordering: .relaxed).newValue <= configuration.maxClients else {
            clients.subtract(1, ordering: .relaxed)
            _ = send(fd, HTTPResponse.make(503, "Service Unavailable", "text/plain", Array("too many streams\n".utf8), head: head))
            return
        }
        stream()
        clients.subtract(1, ordering: .relaxed)
    }

    /// Whether the connection comes from 127.0.0.0/8.
    static func peerIsLoopback(_ fd: Int32) -> Bool {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let r = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard r == 0, address.sin_family == sa_family_t(AF_INET) else { return false }
        return UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
    }

    /// The request head, read whole within ``Configuration/requestTimeout``.
    private func stream(_ fd: Int32, head: Bool) {
        guard send(fd, HTTPResponse.streamHead("multipart/x-mixed-replace; boundary=frame")), !head else { return }
        let viewer = viewerList.arrive(.mjpeg)
        defer { viewerList.leave(viewer) }
        var sent: UInt64 = 0
        var skipped = 0
        while running.load(ordering: .relaxed) {
            // Wait for a frame newer than the last one this client got.
            newFrame.lock()
            var frame = latest.withLock { $0 }
            var closed = false
            while frame.generation == sent && running.load(ordering: .relaxed) && !closed {
                _ = newFrame.wait(until: Date().addingTimeInterval(0.1))
                frame = latest.withLock { $0 }
                closed = Self.peerClosed(fd)
            }
            newFrame.unlock()
            if closed { return } // the slot is freed now, not at the next failed send
            if sent > 0 && frame.generation > sent + 1 { skipped += Int(frame.generation - sent - 1) }
            sent = frame.generation
            guard running.load(ordering: .relaxed), !frame.jpeg.isEmpty else { continue }
            let part =
                Array("--frame\r\nContent-Type: image/jpeg\r\nContent-Length: \(frame.jpeg.count)\r\n\r\n".utf8) + frame.jpeg + [13, 10]
            if !send(fd, part) { return } // gone, or slower than the send timeout
            viewerList.sent(part.count, skipped: skipped, by: viewer)
        }
    }

    /// How long an H.264 viewer waits for the stream's first frame before a 503 ("no video
    /// yet"): the feed encodes only while someone watches, so the first viewer waits for a frame
    /// to come and be encoded.
    package static let firstVideoWait = 5.0

    /// The H.264 stream: its init segment, then its fragments from a key frame, as
    /// ``VideoFragmentRing`` hands them out. The codec string (known once the feed has made the
    /// stream, moments after the first viewer asks) goes in `Content-Type`, for the page's
    /// `MediaSource.isTypeSupported` and `addSourceBuffer`.
    private func videoStream(_ fd: Int32, head: Bool) {
        let viewer = viewerList.arrive(.h264)
        defer { viewerList.leave(viewer) }
        keyFrameWanted.store(true, ordering: .relaxed)
        // Woken when the feed publishes the stream's header (publish(videoHeader:codec:)
        // broadcasts), as the streams below are for each fragment. Bounded by design: a camera
        // that sends no frame within `Self.firstVideoWait` is a 503, not a request held open.
        let deadline = Date().addingTimeInterval(Self.firstVideoWait)
        newFrame.lock()
        var codec = video.codec
        var closed = false
        while codec == nil && Date() < deadline && running.load(ordering: .relaxed) && !closed {
            _ = newFrame.wait(until: min(deadline, Date().addingTimeInterval(0.1)))
            codec = video.codec
            closed = Self.peerClosed(fd)
        }
        newFrame.unlock()
        if closed { return }
        guard let codec else {
            _ = send(fd, HTTPResponse.make(503, "Service Unavailable", "text/plain", Array("no video yet\n".utf8), head: head))
            return
        }
        guard send(fd, HTTPResponse.streamHead("video/mp4; codecs=\"\(codec)\"")), !head else { return }
        var cursor = VideoFragmentRing.Cursor()
        while running.load(ordering: .relaxed) {
            newFrame.lock()
            var next = video.next(for: &cursor)
            var closed = false
            while next == nil && running.load(ordering: .relaxed) && !closed {
                _ = newFrame.wait(until: Date().addingTimeInterval(0.1))
                next = video.next(for: &cursor)
                closed = Self.peerClosed(fd)
            }
            newFrame.unlock()
            if closed { return }
            guard let next else { continue }
            if !send(fd, next) { return } // gone, or slower than the send timeout
            viewerList.sent(next.count, skipped: cursor.skipped, by: viewer)
        }
    }

    /// The H.264 stream's faces as they come, a JSON line a frame (``VideoFaceTimeline/json(_:)``),
    /// from the newest frame's on: what the page draws over each frame as it is shown.
    private func facesStream(_ fd: Int32, head: Bool) {
        guard send(fd, HTTPResponse.streamHead("application/x-ndjson")), !head else { return }
        var after = faceTimeline.newest.map { $0 - 1e-6 }
        while running.load(ordering: .relaxed) {
            newFrame.lock()
            var due = faceTimeline.entries(after: after)
            var closed = false
            while due.isEmpty && running.load(ordering: .relaxed) && !closed {
                _ = newFrame.wait(until: Date().addingTimeInterval(0.1))
                due = faceTimeline.entries(after: after)
                closed = Self.peerClosed(fd)
            }
            newFrame.unlock()
            if closed { return }
            guard let last = due.last else { continue }
            after = last.time
            let lines = due.map { VideoFaceTimeline.json($0).text + "\n" }.joined()
            if !send(fd, Array(lines.utf8)) { return } // gone, or slower than the send timeout
        }
    }

    /// Whether the client hung up (a stream's client sends nothing after its request).
    static func peerClosed(_ fd: Int32) -> Bool {
        // POLLRDHUP (0x2000) is Linux's "peer closed its end"; Glibc's module does not export it.
        let readHangUp: Int16 = 0x2000
        var p = pollfd(fd: fd, events: Int16(POLLIN) | readHangUp, revents: 0)
        guard poll(&p, 1, 0) > 0 else { return false }
        if p.revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0 { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
    }

    /// Sends everything within ``Configuration/sendTimeout`` in all, or reports failure (closed,
    /// or too slow). The deadline is the whole buffer's, not each `send`'s: a client that takes
    /// a few bytes now and then (a slow-loris reader) would otherwise hold one frame, its thread
    /// and a client slot for ever. `SO_SNDTIMEO` bounds each call; after a partial write it is
    /// cut to the time left, and put back for the next buffer.
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool { Self.send(fd, bytes, within: configuration.sendTimeout) }

    /// ``send(_:_:)`` with the timeout given: `timeout` must be `fd`'s `SO_SNDTIMEO` already.
    package static func send(_ fd: Int32, _ bytes: [UInt8], within timeout: Double) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var shortened = false
        defer { if shortened { setSendTimeout(fd, timeout) } }
        var offset = 0
        while offset < bytes.count {
            let start = offset
            let n: Int
            do {
                n = try retryingSystemCall("send") {
                    let r = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + start, $0.count - start, Int32(MSG_NOSIGNAL)) }
                    return (r, errno)
                }
            } catch {
                return false // closed, or slower than the send timeout
            }
            if n == 0 { return false }
            offset += n
            guard offset < bytes.count else { break }
            let left = deadline - ContinuousClock.now
            guard left > .milliseconds(1) else { return false }
            setSendTimeout(fd, left.seconds)
            shortened = true
        }
        return true
    }

    /// `SO_SNDTIMEO`: how long one `send` on `fd` may block.
    package static func setSendTimeout(_ fd: Int32, _ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int(seconds.truncatingRemainder(dividingBy: 1) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}
