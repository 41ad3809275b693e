import Foundation

/// Debian's `ffmpeg` command (installed by scripts/bootstrap): makes the video fixtures at test
/// time, serves live streams, and decodes reference frames.
public enum FFmpegTool {
    public static let path = "/usr/bin/ffmpeg"
    public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }

    /// Runs `ffmpeg -loglevel error -y ARGS…` to completion; throws with its stderr on failure.
    @discardableResult
    public static func run(_ arguments: [String], timeout: Double = 120) throws -> BinaryRun {
        let run = try BinaryRunner.runTool(path, ["-nostdin", "-loglevel", "error", "-y"] + arguments, timeout: timeout)
        guard run.status == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "ffmpeg: \(run.stderr)"]) }
        return run
    }

    /// What ffprobe reads of a file's first video stream, every frame decoded.
    public struct VideoFile: Sendable, CustomStringConvertible {
        public var codec: String
        public var width, height, frames: Int
        /// The container's duration (s).
        public var duration: Double
        /// What ffprobe said on stderr at `-v error` (a torn fragment, a damaged frame): empty for a sound file.
        public var errors: String
        public var description: String {
            "\(codec) \(width)x\(height), \(frames) frames, \(duration) s\(errors.isEmpty ? "" : ", errors: \(errors.prefix(300))")"
        }
    }

    /// `ffprobe -count_frames` of `url`'s first video stream; throws when it cannot read one.
    public static func probe(_ url: URL) throws -> VideoFile {
        let run = try BinaryRunner.runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                "stream=codec_name,width,height,nb_read_frames:format=duration", "-of", "default=nw=1", url.path
            ])
        var fields: [String: String] = [:]
        for line in run.stdout.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard run.status == 0, let codec = fields["codec_name"] else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: run.stderr])
        }
        return VideoFile(
            codec: codec, width: Int(fields["width"] ?? "") ?? 0, height: Int(fields["height"] ?? "") ?? 0,
            frames: Int(fields["nb_read_frames"] ?? "") ?? 0, duration: Double(fields["duration"] ?? "") ?? 0, errors: run.stderr)
    }

    /// A synthetic clip (`testsrc2`, moving patterns) of `frames` frames, encoded with `codec`
    /// (`-c:v` and its options) into `url`'s container.
    public static func clip(
        _ url: URL, size: String = "320x240", rate: Int = 30, frames: Int, codec: [String], filter: String? = nil, extra: [String] = []
    ) throws {
        var arguments = ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(rate)", "-frames:v", "\(frames)"]
        if let filter { arguments += ["-vf", filter] }
        try run(arguments + codec + extra + [url.path])
    }

    /// Starts `ffmpeg -re` serving a clip as MPEG-TS to the first client of
    /// tcp://127.0.0.1:PORT (it listens, serves one connection for `seconds`, and exits).
    /// Returns once ffmpeg listens (its one client must be the test's: a probing connect would
    /// take it).
    /// `pattern`: the lavfi source (a server restarted on the same pattern sends the frames it
    /// sent before, which a reader rightly takes for a recording served again).
    public static func serveTCP(port: Int, seconds: Double, rate: Int = 30, pattern: String = "testsrc2") throws -> Process {
        try serve(
            port: port, path,
            [
                "-nostdin", "-loglevel", "quiet", "-re", "-f", "lavfi", "-i", "\(pattern)=size=320x240:rate=\(rate)", "-t", "\(seconds)",
                "-c:v", "libx264", "-tune", "zerolatency", "-g", "\(rate)", "-f", "mpegts", "tcp://127.0.0.1:\(port)?listen=1"
            ])
    }

    /// As ``serveTCP(port:seconds:rate:)`` on a free port of its own.
    public static func liveStream(seconds: Double) throws -> LiveStream {
        let port = FreePort.next()
        return LiveStream(port: port, server: try serveTCP(port: port, seconds: seconds))
    }

    /// Starts Python's HTTP server on 127.0.0.1:PORT serving `folder` (files with their length,
    /// as any web server serves a recording); returns once it listens.
    public static func serveHTTP(folder: URL, port: Int) throws -> Process {
        // A child started from a test's thread inherits that thread's blocked SIGTERM (Foundation's
        // Process does not reset the mask): `terminate()` never reached the server, and every
        // run left one behind. It unblocks the signal before serving.
        let unblocked = """
            import runpy, signal, sys
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
            sys.argv = ["http.server"] + sys.argv[1:]
            runpy.run_module("http.server", run_name="__main__")
            """
        return try serve(
            port: port, "/usr/bin/python3", ["-c", unblocked, "--bind", "127.0.0.1", "--directory", folder.path, "\(port)"])
    }

    /// Starts a server that writes `file`'s bytes, as they are, to the first client of
    /// tcp://127.0.0.1:PORT and then closes (a live stream carrying whatever the file holds,
    /// forged timestamps included); returns once it listens.
    public static func serveFile(_ file: URL, port: Int) throws -> Process { try serveFiles([file], port: port) }

    /// Starts a server that writes each of `files`, in order, to one client of
    /// tcp://127.0.0.1:PORT each (the next file to the next connection) and half-closes; after
    /// the last it exits, or with `thenForever`, writes that file to every later client.
    /// `readingRequests`: each client's request is read first (an HTTP server's files hold the
    /// whole response). Returns once it listens.
    public static func serveFiles(_ files: [URL], thenForever: URL? = nil, readingRequests: Bool = false, port: Int) throws -> Process {
        let script = """
            import itertools, signal, socket, sys
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", int(sys.argv[1])))
            server.listen(4)
            paths = sys.argv[4:]
            if sys.argv[2]:
                paths = itertools.chain(paths, itertools.repeat(sys.argv[2]))
            for path in paths:
                client, _ = server.accept()
                try:
                    if sys.argv[3] == "read":
                        client.recv(65536)
                    client.sendall(open(path, "rb").read())
                    client.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                client.close()
            """
        return try serve(
            port: port, "/usr/bin/python3",
            ["-c", script, "\(port)", thenForever?.path ?? "", readingRequests ? "read" : ""] + files.map(\.path))
    }

    /// Starts an HTTP server that answers every request on 127.0.0.1:PORT with `file` and no
    /// length (the body ends when the connection closes, as a script streaming a file sends
    /// it), appending a line to `log` for each request. Returns once it listens.
    public static func serveHTTPWithoutLength(_ file: URL, port: Int, log: URL) throws -> Process {
        try serveHTTPForEver(
            file, port: port, log: log,
            answer: """
                client.sendall(b"HTTP/1.0 200 OK\\r\\nContent-Type: application/octet-stream\\r\\n\\r\\n" + data)
                client.shutdown(socket.SHUT_WR)
                """)
    }

    /// Starts an HTTP server that answers every request on 127.0.0.1:PORT with a length three
    /// times `file`'s and only its first half, then closes: a response with a length (read as a
    /// file) that breaks off while it is read. Returns once it listens.
    public static func serveBrokenOffHTTP(_ file: URL, port: Int) throws -> Process {
        try serveHTTPForEver(
            file, port: port, log: nil,
            answer: """
                client.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: video/x-motion-jpeg\\r\\nContent-Length: %d\\r\\n\\r\\n" % (3 * len(data)))
                client.sendall(data[: len(data) // 2])
                """)
    }

    /// A Python server on 127.0.0.1:PORT that reads each client's request (a line in `log`
    /// for each GET), runs `answer` (Python, with `client` and `data`, `file`'s bytes) and
    /// closes, for ever. Returns once it listens.
    static func serveHTTPForEver(_ file: URL, port: Int, log: URL?, answer: String) throws -> Process {
        let indented = answer.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n")
        let script = """
            import signal, socket, sys
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
            data = open(sys.argv[2], "rb").read()
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", int(sys.argv[1])))
            server.listen(4)
            while True:
                client, _ = server.accept()
                try:
                    if client.recv(65536).startswith(b"GET") and sys.argv[3]:
                        with open(sys.argv[3], "a") as log:
                            log.write("GET\\n")
            \(indented)
                except OSError:
                    pass
                client.close()
            """
        return try serve(port: port, "/usr/bin/python3", ["-c", script, "\(port)", file.path, log?.path ?? ""])
    }

    /// Starts `executable` with no standard input or output and returns once it listens on `port`.
    static func serve(port: Int, _ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        waitUntilListening(port: port, process)
        return process
    }

    /// Waits until `port` is in LISTEN (read from /proc/net/tcp) or `process` has ended: on a
    /// machine busy with the other suites a fixed sleep was sometimes too short and the client's
    /// connect was refused.
    static func waitUntilListening(port: Int, _ process: Process) {
        let listening = String(format: ":%04X 00000000:0000 0A", port)
        for _ in 0..<400 where process.isRunning {
            if let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8), table.contains(listening) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Starts GStreamer's RTSP server (Fixtures/rtsp_server.py) on `port`; returns once it
    /// says it is ready. rtsp://127.0.0.1:PORT/test is a live H.264 test pattern.
    public static func serveRTSP(port: Int) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Fixtures.folder.appendingPathComponent("rtsp_server.py").path, "\(port)"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let ready = out.fileHandleForReading.availableData
        guard String(decoding: ready, as: UTF8.self).contains("ready") else {
            process.terminate()
            throw CocoaError(
                .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the RTSP server did not start (scripts/bootstrap installs it)"])
        }
        return process
    }
}

/// A live H.264 stream in MPEG-TS served on 127.0.0.1 (see ``FFmpegTool/liveStream(seconds:)``),
/// as a network camera sends one.
public struct LiveStream {
    public let port: Int
    public let server: Process
    public var url: String { "tcp://127.0.0.1:\(port)" }
    /// Ends the stream (a client sees it drop).
    public func stop() { server.terminate() }
}
