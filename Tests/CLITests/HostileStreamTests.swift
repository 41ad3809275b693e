import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// The CLI against hostile or broken streams: over the pixel budget, junk for a header, a frame
/// that never ends (memory stays bounded), recordings served as streams, servers that answer
/// with no frame. Real servers on loopback, through the real binary.
@Suite("framekit against hostile streams")
struct HostileStreamTests: FaultSuite {
    @Test("a stream whose video is over the pixel budget is a data error (exit 65, 'cannot be used'), not one a retry may mend (75)")
    func streamOverBudget() throws {
        let y4m = Fixtures.temporaryFolder().appendingPathComponent("big.y4m")
        try Data("YUV4MPEG2 W8192 H4096 F30:1 Ip C420jpeg\nFRAME\n".utf8 + [UInt8](repeating: 0, count: 4096)).write(to: y4m)
        let port = FreePort.next()
        let server = try FFmpegTool.serveFile(y4m, port: port)
        defer { server.terminate() }
        let run = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:\(port)", "--reconnect", "0"])
        #expect(
            run.status == 65 && run.stderr.contains("cannot be used") && run.stderr.contains("pixel budget"), "\(run.status) \(run.stderr)")
    }

    @Test(
        "a stream that sends a Y4M header with no valid size is a data error, exit 65 ('not a video FrameKit reads', not 75 and 'Device or resource busy'); one refused, or closed before any byte (a proxy whose backend is down), stays 75"
    )
    func streamOfJunk() throws {
        let folder = Fixtures.temporaryFolder()
        let header = folder.appendingPathComponent("bad.y4m")
        try Data("YUV4MPEG2 Wxyz H-3 F30:1 Ip C420jpeg\nFRAME\n".utf8 + [UInt8](repeating: 0, count: 4096)).write(to: header)
        let empty = folder.appendingPathComponent("empty")
        try Data().write(to: empty)
        for (file, status) in [(header, Int32(65)), (empty, 75)] {
            let port = FreePort.next()
            let server = try FFmpegTool.serveFile(file, port: port)
            defer { server.terminate() }
            let run = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:\(port)", "--reconnect", "0"])
            #expect(run.status == status, "\(file.lastPathComponent): \(run.status) \(run.stderr)")
            if status == 65 {
                #expect(run.stderr.contains("cannot be used") && run.stderr.contains("not a video FrameKit reads"), "\(run.stderr)")
            }
        }
        let refused = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:1", "--reconnect", "0"])
        #expect(refused.status == 75 && refused.stderr.contains("unavailable"), "\(refused.stderr)")
    }

    /// Python: `serve_endless(server, jpeg, mebibytes)` accepts one connection on `server` and
    /// sends five whole JPEGs, the first half of one, then `mebibytes` MiB with no 0xFF in them
    /// (a frame that never ends), then closes. `http`: as the body of a response with a length
    /// and ranges (FFmpeg reads it as a file, seekable), to every request that comes (a range
    /// asked for gets the whole body again).
    static let endlessFrameServer = """
        def send_endless(connection, jpeg, mebibytes, http):
            try:
                if http:
                    connection.recv(65536)
                    total = 6 * len(jpeg) + mebibytes * 1024 * 1024
                    connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: video/x-motion-jpeg\\r\\nAccept-Ranges: bytes\\r\\n"
                                       b"Content-Length: %d\\r\\n\\r\\n" % total)
                for _ in range(5): connection.sendall(jpeg)
                connection.sendall(jpeg[: len(jpeg) // 2])
                junk = bytes(range(1, 255)) * 4096
                for _ in range(mebibytes * 1024 * 1024 // len(junk)): connection.sendall(junk)
            except OSError:
                pass
            connection.close()
        def serve_endless(server, jpeg, mebibytes, http=False):
            while True:
                connection, _ = server.accept()
                if not http:
                    return send_endless(connection, jpeg, mebibytes, http)
                threading.Thread(target=send_endless, args=(connection, jpeg, mebibytes, http), daemon=True).start()
        """

    @Test(
        "in a 1 GiB memory cgroup (a pod's limit), a fleet of a good stream and one whose frame never ends: no OOM kill, the good stream's 60 frames all accounted",
        .enabled(if: MemoryLimitGroup.canRun, Comment(rawValue: MemoryLimitGroup.whyNot)))
    func endlessFrameBesideAGoodStreamInAMemoryLimit() throws {
        let group = try MemoryLimitGroup(bytes: 1 << 30)
        defer { group.remove() }
        // Python serves both streams and runs framekit, inside the group, as its only child.
        let script = """
            import json, socket, subprocess, sys, threading
            jpeg = open(sys.argv[2], "rb").read()
            def listener():
                server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
                return server, server.getsockname()[1]
            good, good_port = listener()
            endless, endless_port = listener()
            def serve_good():
                connection, _ = good.accept()
                try:
                    for _ in range(60): connection.sendall(jpeg)
                except OSError:
                    pass
                connection.close()
            \(Self.endlessFrameServer)
            threading.Thread(target=serve_good, daemon=True).start()
            threading.Thread(target=serve_endless, args=(endless, jpeg, 1536), daemon=True).start()
            command = sys.argv[3:] + ["detect", "--input", "tcp://127.0.0.1:%d" % good_port,
                                      "--input", "tcp://127.0.0.1:%d" % endless_port, "--reconnect", "0"]
            run = subprocess.run(command, capture_output=True, text=True)
            summaries = {}
            for line in run.stdout.splitlines():
                if line.startswith('{"summary"'):
                    s = json.loads(line)["summary"]
                    summaries[s["source"]] = s
            good_summary = summaries.get("tcp://127.0.0.1:%d" % good_port, {})
            print(json.dumps({"status": run.returncode, "good_captured": good_summary.get("frames_captured"),
                              "good_delivered": good_summary.get("frames_delivered"), "sources": len(summaries),
                              "stderr": run.stderr[-400:]}))
            """
        let command = group.wrapping([Self.framekit])
        let run = try BinaryRunner.runTool(
            "/usr/bin/python3", ["-c", script, "-", Fixtures.astronaut.path] + command, timeout: 300)
        let result = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout) \(run.stderr)")
        // Not killed (137 through the shell, -9 directly): the endless frame stayed bounded.
        let status = result["status"] as? Int ?? -1
        #expect(status != 137 && status != -9 && group.oomKills ?? 0 == 0, "\(result)")
        #expect(result["good_captured"] as? Int == 60 && (result["good_delivered"] as? Int ?? 0) >= 1, "\(result)")
        #expect(result["sources"] as? Int == 2, "both streams' summaries: \(result)")
        print("memory limit of 1 GiB: \(result)")
    }

    @Test(
        "an MJPEG stream whose sixth frame never ends, live over tcp or over http with a length (read as a file): its frames, then the stream dropped (exit 75) or the file refused (65); memory bounded (2 GB over tcp, 377 MB over http, before)",
        arguments: ["tcp", "http"])
    func endlessFrameOnAStream(transport: String) throws {
        // Python serves the stream (five whole JPEGs, then a JPEG's start and 300 MB with no
        // 0xFF in it, then closes) and runs framekit as its only child: RUSAGE_CHILDREN's peak
        // is framekit's own.
        let script = """
            import json, resource, socket, subprocess, sys, threading
            jpeg = open(sys.argv[2], "rb").read()
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
            port = server.getsockname()[1]
            \(Self.endlessFrameServer)
            http = sys.argv[3] == "http"
            threading.Thread(target=serve_endless, args=(server, jpeg, 300, http), daemon=True).start()
            url = ("http://127.0.0.1:%d/clip.mjpeg" if http else "tcp://127.0.0.1:%d") % port
            run = subprocess.run([sys.argv[1], "detect", "--input", url, "--reconnect", "0"],
                                 capture_output=True, text=True)
            lines = [l for l in run.stdout.splitlines() if l.startswith('{"frame"')]
            summary = [json.loads(l)["summary"] for l in run.stdout.splitlines() if l.startswith('{"summary"')]
            captured = summary[0]["frames_captured"] if summary else -1
            corrupt = summary[0]["drops"]["corrupt"] if summary else -1
            print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, len(lines), captured, corrupt,
                  run.stderr.strip().replace("\\n", " | "))
            """
        let run = try BinaryRunner.runTool("/usr/bin/python3", ["-c", script, Self.framekit, Fixtures.astronaut.path, transport])
        let fields = run.stdout.split(separator: " ", maxSplits: 5)
        try #require(fields.count == 6, "\(run.stdout) \(run.stderr)")
        #expect(fields[0] == (transport == "http" ? "65" : "75") && (Int(fields[2]) ?? 0) >= 1, "\(run.stdout)")
        #expect(fields[5].contains("without completing a frame"), "\(run.stdout)")
        if transport == "tcp" {
            // The frame that never ended began inside the probe: it is one corrupt drop after
            // the five good frames (it was delivered as a sixth frame, its first rows decoded).
            #expect(fields[3] == "6" && fields[4] == "1", "captured \(fields[3]), corrupt \(fields[4]): \(run.stdout)")
        }
        // Opening reads at most 32 MiB before a frame size is known, and then a frame at most
        // 5.6 MB (512x512's bound): ~190 MB at peak in a debug build; the unguarded parser took
        // 745 MB of the 300 MB sent.
        #expect(Int(fields[1]) ?? .max < 250, "peak RSS \(fields[1]) MB")
    }

    @Test(
        "raw H.264 over tcp whose last NAL unit never ends, and an IP camera's multipart MJPEG over http whose part never ends (no length, no boundary): the frames before, then the stream dropped (75); memory bounded (3.5 GB and 'Cannot allocate memory' before)",
        .enabled(if: FFmpegTool.isInstalled), arguments: ["h264", "multipart"])
    func endlessFrameInOtherForms(form: String) throws {
        let h264 = Fixtures.temporaryFolder("endless-forms").appendingPathComponent("good.h264")
        try FFmpegTool.clip(h264, frames: 10, codec: ["-c:v", "libx264", "-g", "30", "-f", "h264"])
        // Python serves the stream (the good frames, then a frame's start and 300 MB in which
        // no start code or boundary can appear: no zero byte, no '-') and runs framekit as its
        // only child: RUSAGE_CHILDREN's peak is framekit's own.
        let script = """
            import json, resource, socket, subprocess, sys, threading
            form, h264, jpeg = sys.argv[2], open(sys.argv[3], "rb").read(), open(sys.argv[4], "rb").read()
            server = socket.socket(); server.bind(("127.0.0.1", 0)); server.listen(1)
            port = server.getsockname()[1]
            junk = bytes(b for b in range(1, 255) if b != 0x2D) * 4096
            def serve():
                connection, _ = server.accept()
                try:
                    if form == "h264":
                        connection.sendall(h264 + b"\\x00\\x00\\x00\\x01\\x65\\x88")
                    else:
                        connection.recv(65536)
                        connection.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Type: multipart/x-mixed-replace; boundary=frame\\r\\n\\r\\n")
                        for _ in range(5):
                            connection.sendall(b"--frame\\r\\nContent-Type: image/jpeg\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(jpeg) + jpeg + b"\\r\\n")
                        connection.sendall(b"--frame\\r\\nContent-Type: image/jpeg\\r\\n\\r\\n" + jpeg[: len(jpeg) // 2])
                    for _ in range(300 * 1024 * 1024 // len(junk)): connection.sendall(junk)
                except OSError:
                    pass
                connection.close()
            threading.Thread(target=serve, daemon=True).start()
            url = ("tcp://127.0.0.1:%d" if form == "h264" else "http://127.0.0.1:%d/video.cgi") % port
            run = subprocess.run([sys.argv[1], "detect", "--input", url, "--reconnect", "0", "--detector", "haar"],
                                 capture_output=True, text=True)
            summary = [json.loads(l)["summary"] for l in run.stdout.splitlines() if l.startswith('{"summary"')]
            captured = summary[0]["frames_captured"] if summary else -1
            print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, captured,
                  run.stderr.strip().replace("\\n", " | "))
            """
        let run = try BinaryRunner.runTool("/usr/bin/python3", ["-c", script, Self.framekit, form, h264.path, Fixtures.astronaut.path])
        let fields = run.stdout.split(separator: " ", maxSplits: 3)
        try #require(fields.count == 4, "\(run.stdout) \(run.stderr)")
        #expect(fields[0] == "75" && (Int(fields[2]) ?? 0) >= 1, "\(run.stdout)")
        #expect(fields[3].contains("without completing a frame"), "\(run.stdout)")
        #expect(Int(fields[1]) ?? .max < 250, "peak RSS \(fields[1]) MB")
    }

    @Test(
        "an RTSP stream (H.264 over interleaved RTP) whose IDR frame never ends after 10 good ones: its frames, then the stream's end, exit 75; memory bounded though FFmpeg reads RTSP itself (1 GiB sent: 255 MB at peak, 2.2 GB unbounded)",
        .enabled(if: FFmpegTool.isInstalled))
    func endlessFrameOverRTSP() throws {
        let h264 = Fixtures.temporaryFolder("rtsp-endless").appendingPathComponent("good.h264")
        let made = try FFmpegTool.run([
            "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-frames:v", "10", "-c:v", "libx264", "-preset", "veryfast",
            "-g", "30", "-bsf:v", "h264_mp4toannexb", "-f", "h264", h264.path
        ])
        try #require(made.status == 0, "\(made.stderr)")
        // Python starts the server and runs framekit as its only other child: RUSAGE_CHILDREN's
        // peak is framekit's (the server's is a few MB).
        let script = """
            import resource, subprocess, sys
            server = subprocess.Popen([sys.executable, sys.argv[2], sys.argv[3], "1024"], stdout=subprocess.PIPE, text=True)
            port = int(server.stdout.readline().split()[1])
            run = subprocess.run([sys.argv[1], "detect", "--input", "rtsp://127.0.0.1:%d/test" % port, "--reconnect", "0"],
                                 capture_output=True, text=True)
            server.wait()
            lines = [l for l in run.stdout.splitlines() if l.startswith('{"frame"')]
            print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, len(lines), run.stderr.strip().replace("\\n", " | "))
            """
        let server = Fixtures.folder.appendingPathComponent("rtsp_endless_server.py").path
        let run = try BinaryRunner.runTool("/usr/bin/python3", ["-c", script, Self.framekit, server, h264.path], timeout: 300)
        let fields = run.stdout.split(separator: " ", maxSplits: 3)
        try #require(fields.count == 4, "\(run.stdout) \(run.stderr)")
        #expect(fields[0] == "75" && (Int(fields[2]) ?? 0) >= 1, "\(run.stdout)")
        // One allocation of FFmpeg's at most a frame of the pixel budget (7680x4320: 203 MB), and
        // the parser's buffer copied as it grows: 255 MB at peak here (2,204 MB unbounded).
        #expect(Int(fields[1]) ?? .max < 700, "peak RSS \(fields[1]) MB")
    }

    @Test(
        "an http:// or file:// URL to a recording (MP4, and .ts, .mjpeg, .h264 with no duration of their own) is a file: every frame once, then the run ends (it was replayed for ever as a live stream)"
    )
    func urlToAFileEnds() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("clip.mp4")
        try FFmpegTool.clip(clip, frames: 20, codec: ["-c:v", "libx264"])
        // Formats with no duration of their own: only the response's length says they end (#52:
        // replayed for ever, 45 GETs in 25 s).
        try FFmpegTool.clip(folder.appendingPathComponent("clip.ts"), frames: 20, codec: ["-c:v", "libx264", "-f", "mpegts"])
        try FFmpegTool.clip(folder.appendingPathComponent("clip.mjpeg"), frames: 20, codec: ["-c:v", "mjpeg", "-f", "mjpeg"])
        try FFmpegTool.clip(folder.appendingPathComponent("clip.h264"), frames: 20, codec: ["-c:v", "libx264", "-f", "h264"])
        let port = FreePort.next()
        let server = try FFmpegTool.serveHTTP(folder: folder, port: port)
        defer { server.terminate() }
        let served = ["clip.mp4", "clip.ts", "clip.mjpeg", "clip.h264"].map { "http://127.0.0.1:\(port)/\($0)" }
        for url in served + [clip.absoluteString] {
            let run = try BinaryRunner.run("framekit", ["detect", "--detector", "haar", "--input", url], timeout: 60)
            let lines = try run.jsonLines()
            let summary = try #require(lines.last?["summary"] as? [String: Any], "\(url): \(run.status) \(run.stderr)")
            #expect(run.status == 0 && summary["frames_captured"] as? Int == 20, "\(url): \(run.status) \(summary)")
            #expect(lines.filter { $0["frame"] != nil }.count == 20 && !run.stderr.contains("reconnect"), "\(url): \(run.stderr)")
        }
    }

    @Test(
        "a stream that ends and, reopened, begins with its first frame again is a recording served again: read once, exit 0 (an http response with no length, a server writing a file to each client: replayed for ever before); one that comes back with other frames goes on"
    )
    func replayedRecordingEnds() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("clip.mjpeg")
        let other = folder.appendingPathComponent("other.mjpeg")
        try FFmpegTool.clip(clip, frames: 20, codec: ["-c:v", "mjpeg", "-f", "mjpeg"])
        try FFmpegTool.clip(other, frames: 20, codec: ["-c:v", "mjpeg", "-f", "mjpeg"], filter: "negate")
        // Frames come at a live stream's pace (all at once here): late ones drop, so the count
        // is the summary's captured frames, not the frame lines.
        func captured(_ run: BinaryRun) throws -> Int? { try run.summary()?["frames_captured"] as? Int }
        // http with no length: the body ends when the server closes, as a live stream's would.
        let log = folder.appendingPathComponent("requests.log")
        let httpPort = FreePort.next()
        let http = try FFmpegTool.serveHTTPWithoutLength(clip, port: httpPort, log: log)
        defer { http.terminate() }
        let served = try BinaryRunner.run(
            "framekit", ["detect", "--detector", "haar", "--input", "http://127.0.0.1:\(httpPort)/clip.mjpeg"], timeout: 60)
        let counted = try captured(served)
        #expect(served.status == 0 && counted == 20, "\(served.status) \(String(describing: counted)) \(served.stderr)")
        // The probe's GET, the run's, the replay's first frame: three, not one every half second.
        let requests = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").count
        #expect(requests <= 3, "\(requests) requests")
        // tcp: the first file, another (the stream came back), the other again (a replay): 40.
        let tcpPort = FreePort.next()
        let tcp = try FFmpegTool.serveFiles([clip, other], thenForever: other, port: tcpPort)
        defer { tcp.terminate() }
        let live = try BinaryRunner.run("framekit", ["detect", "--detector", "haar", "--input", "tcp://127.0.0.1:\(tcpPort)"], timeout: 60)
        let liveCounted = try captured(live)
        #expect(live.status == 0 && liveCounted == 40, "\(live.status) \(String(describing: liveCounted)) \(live.stderr)")
        #expect(live.stderr.contains("reconnecting") && live.stderr.contains("back"), "\(live.stderr)")
    }

    @Test(
        "a server that, after a first stream, answers every connection with a header and no frame is given up after --reconnect attempts (each open succeeded, so the attempts started over: it was reopened for ever)"
    )
    func connectionsWithNoFrameAreBounded() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("clip.y4m")
        try FFmpegTool.clip(clip, frames: 10, codec: ["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe"])
        let header = folder.appendingPathComponent("header.y4m")
        let bytes = try Data(contentsOf: clip)
        let newline = try #require(bytes.firstIndex(of: UInt8(ascii: "\n")))
        try bytes[...newline].write(to: header)
        let port = FreePort.next()
        let server = try FFmpegTool.serveFiles([clip], thenForever: header, port: port)
        defer { server.terminate() }
        let run = try BinaryRunner.run(
            "framekit", ["detect", "--detector", "haar", "--input", "tcp://127.0.0.1:\(port)", "--reconnect", "2"], timeout: 60)
        // At a live stream's pace late frames drop: the summary's captured frames are the count.
        let captured = try run.summary()?["frames_captured"] as? Int
        #expect(
            run.status == 75 && captured == 10 && run.stderr.contains("gave up after 2 attempts"),
            "\(run.status) \(String(describing: captured)) \(run.stderr)")
    }
}
