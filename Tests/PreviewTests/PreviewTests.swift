import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

@Suite("The preview server over loopback")
struct PreviewTests {
    @Test(
        "a program that runs a PreviewFeed gets glibc's mmap threshold fixed (the call the CLI makes, whose hour-long soak is flat), unless its environment sets one"
    )
    func feedFixesTheAllocatorThreshold() throws {
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil else { return } // the environment's setting wins: nothing to check
        _ = PreviewFeed(server: PreviewServer(), fixesAllocatorThreshold: false)
        _ = PreviewFeed(server: PreviewServer())
        // Set once per process, by the first feed that asks (or the CLI); read here without
        // setting it. (Whether a given block is then mapped depends on the heap's free space at
        // that moment, so the allocator itself is not probed.)
        #expect(GlibcMalloc.isMmapThresholdFixed)
    }

    func server(maxClients: Int = 4, sendTimeout: Double = 2) throws -> PreviewServer {
        var configuration = PreviewServer.Configuration()
        configuration.port = 0
        configuration.maxClients = maxClients
        configuration.sendTimeout = sendTimeout
        let server = PreviewServer(configuration: configuration)
        try server.start()
        return server
    }

    var photo: [UInt8] { (try? ImageFile.read(Fixtures.astronaut)) ?? [] }

    @Test("fixed routes; GET and HEAD only; everything else 404, path tricks included")
    func routes() throws {
        let server = try server()
        defer { server.stop() }
        server.publish(statsJSON: "{\"fps\": 30}")
        let page = try RawHTTP.request(port: server.port, "GET", "/")
        #expect(page.status == 200 && page.headers.contains("text/html"))
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("fetch('/stream.mp4'") && html.contains("img.src = '/stream.mjpeg'"))
        let head = try RawHTTP.request(port: server.port, "HEAD", "/")
        #expect(head.status == 200 && head.body.isEmpty && head.headers.contains("Content-Length: \(page.body.count)"))
        let stats = try RawHTTP.request(port: server.port, "GET", "/stats.json")
        #expect(stats.status == 200)
        #expect((try JSONSerialization.jsonObject(with: Data(stats.body)) as? [String: Int])?["fps"] == 30)
        for method in ["PUT", "DELETE", "OPTIONS", "POST"] {
            let r = try RawHTTP.request(port: server.port, method, "/")
            #expect(r.status == 405 && r.headers.contains("Allow: GET, HEAD"), "\(method)")
        }
        for path in [
            "/nope", "/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd", "/stream.mjpeg/../../etc/passwd", "/switch/0",
            "/index.html"
        ] {
            #expect(try RawHTTP.request(port: server.port, "GET", path).status == 404, "\(path)")
        }
        let garbage = try RawHTTP(port: server.port)
        garbage.send("HELLO\r\n\r\n")
        #expect(RawHTTP.split(garbage.read()).status == 400)
    }

    @Test("the stream is multipart/x-mixed-replace with well-framed JPEG parts, newest frame first")
    func streamFraming() throws {
        let server = try server()
        defer { server.stop() }
        server.publish(jpeg: photo)
        let client = try RawHTTP(port: server.port)
        client.send("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        // The response head and the first part (the frame published before the request), read
        // whole before the second frame is published: no timer deciding which comes first.
        var raw: [UInt8] = []
        func readThroughBlankLine() {
            let start = raw.count
            while !(raw.count >= start + 4 && raw.suffix(4) == [13, 10, 13, 10]) {
                let byte = client.read(atMost: 1)
                if byte.isEmpty { return }
                raw += byte
            }
        }
        readThroughBlankLine() // the response head
        readThroughBlankLine() // the first part's head
        raw += client.read(atMost: photo.count + 2)
        server.publish(jpeg: photo)
        raw += client.read(
            atMost: "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\n\r\n".utf8.count + photo.count + 2)
        let (status, headers, body) = RawHTTP.split(raw)
        #expect(
            status == 200 && headers.contains("multipart/x-mixed-replace; boundary=frame")
                && headers.contains("X-Content-Type-Options: nosniff"))
        // Two parts: "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: N\r\n\r\n" + N bytes + "\r\n".
        var cursor = 0
        for _ in 0..<2 {
            let part = RawHTTP.split(Array(body[cursor...]))
            let headerText = String(decoding: body[cursor..<min(body.count, cursor + 200)], as: UTF8.self)
            #expect(headerText.hasPrefix("--frame\r\nContent-Type: image/jpeg\r\nContent-Length: \(photo.count)\r\n\r\n"))
            let start = body.count - part.body.count
            try #require(body.count >= start + photo.count + 2)
            #expect(Array(body[start..<start + photo.count]) == photo)
            #expect(body[start + photo.count] == 13 && body[start + photo.count + 1] == 10)
            cursor = start + photo.count + 2
        }
    }

    /// The virtual camera at VGA feeding a `PreviewFeed` on a fresh server (through a
    /// ``FeedRelay``) while `body` runs.
    func withFeed(stalling: Bool = false, _ body: (PreviewServer, FeedRelay) throws -> Void) throws {
        try #require(FFmpegTool.isInstalled)
        let server = try server()
        defer { server.stop() }
        let feed = FeedRelay(PreviewFeed(server: server, fixesAllocatorThreshold: false), stalls: stalling)
        let (session, _) = try makeSession(.virtualCamera, preset: .vga640x480, recorder: feed)
        try session.startRunning()
        defer { session.stopRunning() }
        try body(server, feed)
    }

    @Test(
        "/stream.mp4: H.264 in fragmented MP4 from one encoder for every viewer — a viewer that joins late starts at a key frame, both decode cleanly, and the bytes are a small fraction of MJPEG's"
    )
    func h264Stream() throws {
        try withFeed { server, _ in
            #expect(!server.hasVideoViewers && !server.hasMJPEGViewers)
            let first = try RawHTTP(port: server.port)
            first.send("GET /stream.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            var early = first.read(for: 1.5)
            #expect(server.hasVideoViewers && !server.hasMJPEGViewers)
            let second = try RawHTTP(port: server.port)
            second.send("GET /stream.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let late = second.read(for: 2)
            early += first.read(for: 0.1)
            let mjpeg = try RawHTTP(port: server.port)
            mjpeg.send("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let jpegBytes = mjpeg.read(for: 2)
            let folder = Fixtures.temporaryFolder()
            for (name, raw) in [("early", early), ("late", late)] {
                let (status, headers, body) = RawHTTP.split(raw)
                #expect(
                    status == 200 && headers.contains("Content-Type: video/mp4; codecs=\"avc1.")
                        && headers.contains("X-Content-Type-Options: nosniff"), "\(headers)")
                // ftyp first (the init segment), then fragments.
                #expect(body.count > 8 && Array(body[4..<8]) == Array("ftyp".utf8))
                let file = folder.appendingPathComponent("\(name).mp4")
                try Data(body).write(to: file)
                let probe = try FFmpegTool.probe(file)
                // Every frame decodes: the late viewer's first fragment is a key frame (a stream that
                // began at a P-frame gives the decoder's errors and fewer frames).
                #expect(probe.codec == "h264" && probe.width == 640 && probe.height == 480 && probe.errors.isEmpty, "\(name): \(probe)")
                #expect(probe.frames >= (name == "late" ? 25 : 20), "\(name): \(probe)")
            }
            // Two seconds each: H.264 at the default cap against JPEG at quality 75.
            let h264PerSecond = Double(late.count) / 2
            let jpegPerSecond = Double(jpegBytes.count) / 2
            #expect(jpegPerSecond > 0 && h264PerSecond * 4 < jpegPerSecond, "H.264 \(h264PerSecond) B/s, MJPEG \(jpegPerSecond) B/s")
            // Each viewer with what it was sent, in /stats.json too (the feed publishes it).
            let viewers = server.viewers
            #expect(viewers.filter { $0.stream == .h264 }.count == 2 && viewers.filter { $0.stream == .mjpeg }.count == 1, "\(viewers)")
            #expect(viewers.allSatisfy { $0.bytesSent > 0 && $0.bytesPerSecond > 0 }, "\(viewers)")
            let stats = try RawHTTP.request(port: server.port, "GET", "/stats.json")
            let listed = ((try JSONSerialization.jsonObject(with: Data(stats.body))) as? [String: Any])?["viewers"] as? [[String: Any]]
            #expect(
                Set(listed?.compactMap { $0["stream"] as? String } ?? []) == ["h264", "mjpeg"],
                "\(String(decoding: stats.body, as: UTF8.self))"
            )
            first.close()
            second.close()
            #expect(eventually(timeout: 10) { !server.hasVideoViewers }, "the closed viewers were still counted")
        }
    }

    /// A `PreviewFeed` behind a delegate that counts drops and, when `stalls`, stalls on every
    /// third frame: the session drops late frames (newest wins), so the frames that reach the
    /// feed have gaps in their times.
    final class FeedRelay: VideoDataOutputSampleBufferDelegate {
        let feed: PreviewFeed
        let stalls: Bool
        let delivered = Atomic<Int>(0)
        let dropped = Atomic<Int>(0)
        init(_ feed: PreviewFeed, stalls: Bool) { (self.feed, self.stalls) = (feed, stalls) }
        func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection) {
            if stalls && delivered.add(1, ordering: .relaxed).newValue % 3 == 0 { Thread.sleep(forTimeInterval: 0.09) }
            feed.captureOutput(output, didOutput: sampleBuffer, from: connection)
        }
        func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
            dropped.add(1, ordering: .relaxed)
            feed.captureOutput(output, didDrop: frame, from: connection)
        }
    }

    @Test(
        "the faces beside the H.264 stream are at its frames' own times, frames dropped on the way or not (each frame of the stream has its entry in /faces.json)"
    )
    func facesOnTheStreamsTimeline() throws {
        try withFeed(stalling: true) { server, feed in
            let viewer = try RawHTTP(port: server.port)
            viewer.send("GET /stream.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let raw = viewer.read(for: 2.5)
            viewer.close()
            let listed = try RawHTTP.request(port: server.port, "GET", "/faces.json")
            let frames =
                ((try JSONSerialization.jsonObject(with: Data(listed.body))) as? [String: Any])?["frames"] as? [[String: Any]] ?? []
            let faceTimes = frames.compactMap { $0["t"] as? Double }
            #expect(feed.dropped.load(ordering: .relaxed) > 5, "no frames were dropped: nothing to check")
            let file = Fixtures.temporaryFolder().appendingPathComponent("stream.mp4")
            try Data(RawHTTP.split(raw).body).write(to: file)
            let probe = try BinaryRunner.runTool(
                "/usr/bin/ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", file.path])
            let streamTimes = probe.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            #expect(probe.status == 0 && streamTimes.count >= 20, "\(streamTimes.count) frames: \(probe.stderr.prefix(300))")
            // /faces.json keeps the last 150 frames: the 2.5 s watched are all in it.
            let unmatched = streamTimes.filter { time in !faceTimes.contains { abs($0 - time) < 0.001 } }
            #expect(
                unmatched.isEmpty,
                "frames of the stream with no faces entry at their time: \(unmatched.prefix(10)) of \(streamTimes.count); entries \(faceTimes.suffix(10))"
            )
        }
    }

    @Test("a bounded number of streams: the next one gets 503, while pages and stats are still served")
    func clientLimit() throws {
        let server = try server(maxClients: 2)
        defer { server.stop() }
        server.publish(jpeg: photo)
        let a = try RawHTTP(port: server.port)
        let b = try RawHTTP(port: server.port)
        a.send("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        b.send("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = a.read(atMost: 100)
        _ = b.read(atMost: 100)
        #expect(server.connectedClients == 2)
        #expect(try RawHTTP.request(port: server.port, "GET", "/stream.mjpeg").status == 503)
        #expect(try RawHTTP.request(port: server.port, "GET", "/stats.json").status == 200)
        #expect(try RawHTTP.request(port: server.port, "GET", "/").status == 200)
        // A viewer that closes its tab frees its slot at once, not at the next failed send.
        a.close()
        #expect(eventually(timeout: 10) { server.connectedClients == 1 }, "the closed viewer's slot was not freed")
    }

    @Test(
        "an H.264 viewer waits for the stream's header, woken when it comes (its codec in Content-Type); with no video within firstVideoWait, a 503 'no video yet', not a request held open"
    )
    func firstVideoWait() throws {
        let server = try server()
        defer { server.stop() }
        // Nothing published: the documented bound, then 503.
        let started = Date()
        let none = try RawHTTP.request(port: server.port, "GET", "/stream.mp4")
        let waited = Date().timeIntervalSince(started)
        #expect(none.status == 503 && String(decoding: none.body, as: UTF8.self) == "no video yet\n", "\(none.status)")
        #expect(waited >= PreviewServer.firstVideoWait - 0.2, "answered after \(waited) s")
        // A viewer that asked first is answered once the header is published, well inside the bound.
        let viewer = try RawHTTP(port: server.port)
        viewer.send("GET /stream.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(eventually(timeout: 10) { server.connectedClients == 1 })
        let asked = Date()
        server.publish(videoHeader: [0, 0, 0, 8] + Array("ftyp".utf8), codec: "avc1.64001F")
        let status = String(decoding: viewer.read(atMost: 12), as: UTF8.self)
        let answered = Date().timeIntervalSince(asked)
        let head = String(decoding: viewer.read(for: 0.5), as: UTF8.self)
        #expect(status == "HTTP/1.1 200" && head.contains("codecs=\"avc1.64001F\""), "\(status)\(head)")
        #expect(answered < PreviewServer.firstVideoWait, "the viewer was not woken by the header (\(answered) s)")
    }

    @Test(
        "a client that stops reading never stalls publishing, and is dropped (either stream)", arguments: ["/stream.mjpeg", "/stream.mp4"])
    func slowClient(stream: String) throws {
        let server = try server(sendTimeout: 0.5)
        defer { server.stop() }
        let big = [UInt8](repeating: 0xAB, count: 2_000_000)
        func publish() {
            if stream == "/stream.mjpeg" { server.publish(jpeg: big) } else { server.publish(videoFragment: big, isKey: true) }
        }
        server.publish(videoHeader: [0, 0, 0, 8] + Array("ftyp".utf8), codec: "avc1.64001F")
        publish()
        let stalled = try RawHTTP(port: server.port)
        stalled.send("GET \(stream) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") // and never reads
        let start = Date()
        for _ in 0..<200 {
            publish()
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(Date().timeIntervalSince(start) < 4, "publishing was held up by the client")
        #expect(eventually(timeout: 10) { server.connectedClients == 0 }, "the stalled client was not dropped")
        _ = stalled
    }

    @Test(
        "a reader that takes a little now and then (slow loris) cannot hold a frame: the send timeout is the whole frame's, not each write's"
    )
    func tricklingReader() throws {
        // TCP over loopback, as the server's clients: small buffers, so that the frame waits on
        // the reader (a Unix socket's send restarts its timeout for each chunk; TCP's does not).
        func connectedPair(receiveBuffer: Int32) throws -> (writer: Int32, reader: Int32) {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(listener) }
            var size = receiveBuffer
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try withUnsafeMutablePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    try #require(bind(listener, raw, length) == 0 && listen(listener, 1) == 0)
                    try #require(getsockname(listener, raw, &length) == 0)
                }
            }
            let writer = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var small: Int32 = 4096
            setsockopt(writer, SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    try #require(connect(writer, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0)
                }
            }
            let reader = accept(listener, nil, nil)
            try #require(reader >= 0)
            PreviewServer.setSendTimeout(writer, 0.5)
            return (writer, reader)
        }
        final class Stop: Sendable { let flag = Atomic<Bool>(false) }
        /// Reads `chunk` bytes every `pause` s until the peer closes or `stop`.
        func read(_ fd: Int32, chunk: Int, pause: Double, stop: Stop) -> Thread {
            let thread = Thread {
                var buffer = [UInt8](repeating: 0, count: chunk)
                while !stop.flag.load(ordering: .relaxed) {
                    if recv(fd, &buffer, chunk, Int32(MSG_DONTWAIT)) == 0 { return }
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                }
            }
            thread.start()
            return thread
        }
        let frame = [UInt8](repeating: 0x5A, count: 400_000)
        let stop = Stop()
        defer { stop.flag.store(true, ordering: .relaxed) }
        // 1 KB every 20 ms: each write makes progress well within 0.5 s; the frame would take 8 s.
        let slow = try connectedPair(receiveBuffer: 4096)
        defer { for fd in [slow.writer, slow.reader] { close(fd) } }
        _ = read(slow.reader, chunk: 1024, pause: 0.02, stop: stop)
        let start = ContinuousClock.now
        let sent = PreviewServer.send(slow.writer, frame, within: 0.5)
        let took = ContinuousClock.now - start
        #expect(!sent && took < .seconds(1.5), "sent: \(sent), after \(took)")
        // A prompt reader gets the same frame whole, through the same small buffers.
        let prompt = try connectedPair(receiveBuffer: 4096)
        defer { for fd in [prompt.writer, prompt.reader] { close(fd) } }
        _ = read(prompt.reader, chunk: 65536, pause: 0, stop: stop)
        PreviewServer.setSendTimeout(prompt.writer, 3) // ~50 hand-overs of the small buffer, on a loaded machine too
        #expect(PreviewServer.send(prompt.writer, frame, within: 3))
    }

    @Test("binds 127.0.0.1 by default and rejects a bad host")
    func defaults() throws {
        #expect(PreviewServer.Configuration().host == "127.0.0.1")
        var configuration = PreviewServer.Configuration()
        configuration.host = "not-an-address"
        #expect(throws: PreviewServer.ServerError.self) { try PreviewServer(configuration: configuration).start() }
    }
}
