import Foundation
import FrameKit
import FrameKitCommands
import FrameTestSupport
import Testing

@Suite("--metrics: Prometheus text and a health check from the running binary")
struct MetricsCommandTests {
    /// `framekit ARGS`, running; stopped with SIGINT by the caller.
    /// framekit running with its metrics on `port`.
    struct Serving {
        let port: Int
        let process: Process
        /// Ctrl-C, and the wait for the process to end.
        func stop() {
            if process.isRunning { process.interrupt() }
            process.waitUntilExit()
        }
    }

    /// Starts `framekit ARGUMENTS --metrics HOST:PORT` on a free port (no host: `--metrics PORT`).
    func serving(_ arguments: [String], host: String? = "127.0.0.1") throws -> Serving {
        let port = FreePort.next()
        let process = Process()
        process.executableURL = BinaryRunner.productsFolder.appendingPathComponent("framekit")
        process.arguments = arguments + ["--metrics", host.map { "\($0):\(port)" } ?? "\(port)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return Serving(port: port, process: process)
    }

    /// GET `path` until the server answers (it starts with the process: on a machine busy with
    /// the other suites that took over the 5 s this once allowed).
    func get(_ port: Int, _ path: String, tries: Int = 600) throws -> (status: Int, body: String) {
        for _ in 0..<tries {
            if let r = try? RawHTTP.request(port: port, "GET", path, headers: "Host: pod-10-1-2-3:\(port)\r\n"), r.status > 0 {
                return (r.status, String(decoding: r.body, as: UTF8.self))
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no HTTP answer on 127.0.0.1:\(port)\(path) in \(tries / 20) s"])
    }

    /// `/metrics` once `condition` holds for it (a source's series appear once it is open and,
    /// with detection, once the model has loaded: seconds on a busy machine).
    func metrics(_ port: Int, timeout: Double = 60, until condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var text = try get(port, "/metrics").body
        while !condition(text) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            text = try get(port, "/metrics").body
        }
        return text
    }

    /// Prometheus' own linter (`promtool check metrics`, Debian's prometheus package:
    /// scripts/bootstrap) passes `page`: every /metrics the CLI serves is checked with it.
    func lint(_ page: String, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let promtool = "/usr/bin/promtool"
        try #require(FileManager.default.isExecutableFile(atPath: promtool), "scripts/bootstrap installs promtool (prometheus)")
        let file = Fixtures.temporaryFolder().appendingPathComponent("metrics.txt")
        try Data(page.utf8).write(to: file)
        let run = try BinaryRunner.runTool("/bin/sh", ["-c", "exec \"$0\" check metrics < \"$1\"", promtool, file.path])
        #expect(run.status == 0, "\(comment?.description ?? "") \(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
    }

    /// The value of the series `name{labels}` in Prometheus text.
    func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("detect --metrics: monotonic counters by source and reason, cumulative histograms, healthz 200, nothing else served")
    func detect() throws {
        let framekit = try serving(["detect", "--device", "virtual", "--preset", "vga640x480"])
        defer { framekit.stop() }
        let port = framekit.port
        _ = try metrics(port) {
            (value($0, "framekit_frames_captured_total{source=\"virtual\"}") ?? 0) > 0
                && value($0, "framekit_detection_passes_total{source=\"virtual\"}") != nil
        }
        let first = try get(port, "/metrics")
        #expect(first.status == 200, "\(first.body)")
        #expect(first.body.contains("# TYPE framekit_frames_captured_total counter"))
        let captured1 = try #require(value(first.body, "framekit_frames_captured_total{source=\"virtual\"}"))
        #expect(value(first.body, "framekit_frames_dropped_total{source=\"virtual\",reason=\"frame_was_late\"}") != nil)
        Thread.sleep(forTimeInterval: 1)
        let second = try get(port, "/metrics").body
        let captured2 = try #require(value(second, "framekit_frames_captured_total{source=\"virtual\"}"))
        #expect(captured2 > captured1, "counters do not grow: \(captured1) → \(captured2)")
        // Histogram buckets are cumulative and end at the count.
        let buckets = second.split(separator: "\n").filter { $0.hasPrefix("framekit_latency_seconds_bucket{source=\"virtual\"") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }
        let count = try #require(value(second, "framekit_latency_seconds_count{source=\"virtual\"}"))
        #expect(buckets.count == 12 && zip(buckets, buckets.dropFirst()).allSatisfy { $0 <= $1 } && buckets.last == count, "\(buckets)")
        #expect((value(second, "framekit_resident_memory_bytes") ?? 0) > 1_000_000)
        // The tracker's passes: whether detection keeps up, per source.
        let passes1 = try #require(value(first.body, "framekit_detection_passes_total{source=\"virtual\"}"), "\(first.body)")
        let passes2 = try #require(value(second, "framekit_detection_passes_total{source=\"virtual\"}"))
        #expect(passes2 >= passes1 && passes2 > 0, "passes \(passes1) → \(passes2)")
        let latency = try #require(value(second, "framekit_detection_pass_seconds{source=\"virtual\",quantile=\"0.5\"}"))
        #expect(latency > 0 && latency < 10)
        // Quantiles as Prometheus summaries, each with _sum and _count (the count is the passes);
        // the maxima gauges of their own (promtool refuses a gauge with a quantile label).
        #expect(value(second, "framekit_detection_pass_seconds_count{source=\"virtual\"}") == passes2)
        #expect((value(second, "framekit_detection_pass_seconds_sum{source=\"virtual\"}") ?? 0) >= latency)
        #expect((value(second, "framekit_detection_pass_max_seconds{source=\"virtual\"}") ?? 0) >= latency)
        #expect(value(second, "framekit_detection_result_age_frames{source=\"virtual\",quantile=\"0.5\"}") != nil)
        #expect(value(second, "framekit_detection_result_age_max_frames{source=\"virtual\"}") != nil)
        try lint(second)
        #expect(value(second, "framekit_detection_budget_wait_seconds_total{source=\"virtual\"}") != nil)
        #expect(try get(port, "/healthz").status == 200)
        #expect(try get(port, "/").status == 404 && get(port, "/stream.mjpeg").status == 404)
    }

    @Test("the live warning's rule: said when passes' faces come more than half a second late, not while they keep up")
    func fallingBehind() throws {
        /// A detector whose every pass takes `seconds` (a network's cost on a busy machine).
        final class Slow: FaceDetecting {
            let seconds: Double
            init(_ seconds: Double) { self.seconds = seconds }
            var name: String { "slow" }
            var modelURL: URL { URL(fileURLWithPath: "/") }
            func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double)
                throws(FaceDetectorError) -> DetectionPass
            {
                Thread.sleep(forTimeInterval: seconds)
                return DetectionPass(faces: [])
            }
        }
        let frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
        func statistics(passSeconds: Double, frameSeconds: Double, scheduler: PassScheduler? = nil) throws -> PassStatistics {
            let tracker = try FaceTracker(detector: Slow(passSeconds), options: .init(schedule: .background), scheduler: scheduler)
            while tracker.statistics.passes < 10 {
                _ = try tracker.faces(in: frame)
                if frameSeconds > 0 { Thread.sleep(forTimeInterval: frameSeconds) } // a camera's pace
            }
            tracker.waitUntilIdle()
            return tracker.statistics
        }
        // Frames as fast as they come, passes of 50 ms: each pass spans hundreds of frames.
        let slow = try statistics(passSeconds: 0.05, frameSeconds: 0)
        try #require(slow.recentAges.suffix(8).allSatisfy { $0 > 15 }, "\(slow.recentAges)")
        let message = try #require(LatePassWatch.message(for: slow, source: "cam"))
        #expect(message.hasPrefix("framekit: cam: face detection is falling behind") && !message.contains("--cpu-budget"), "\(message)")
        // Passes that also waited for a CPU budget (the rest of the process always over it, so
        // each waits the longest wait, 30 ms): the line says so.
        let origin = ContinuousClock.now
        let overBudget = PassScheduler(
            lanes: 1, budget: CPUBudget(cores: 0.5, longestWait: .milliseconds(30), cpuTime: { (ContinuousClock.now - origin) * 100 }))
        let budgeted = try statistics(passSeconds: 0.02, frameSeconds: 0, scheduler: overBudget)
        let said = try #require(LatePassWatch.message(for: budgeted, source: "cam"), "\(budgeted.recentAges)")
        #expect(
            budgeted.budgetWaitSeconds >= 0.25 && said.contains("for the CPU budget (--cpu-budget)"),
            "\(budgeted.budgetWaitSeconds): \(said)")
        // Passes far quicker than 20 ms frames: their faces join on the next frame or so.
        let fast = try statistics(passSeconds: 0, frameSeconds: 0.02)
        #expect(LatePassWatch.message(for: fast, source: "cam") == nil, "\(fast.recentAges)")
    }

    @Test("a stream's password and secret query values never reach /metrics (admin:***@, password=***); a fleet's page passes promtool")
    func metricsRedacted() throws {
        try #require(FFmpegTool.isInstalled)
        let stream = try FFmpegTool.liveStream(seconds: 30)
        defer { stream.stop() }
        // A second source (a fleet's page) with secrets in its query (tcp:// ignores parameters it
        // does not know).
        let second = try FFmpegTool.liveStream(seconds: 30)
        defer { second.stop() }
        let framekit = try serving([
            "detect", "--input", "tcp://admin:s3cret@127.0.0.1:\(stream.port)",
            "--input", "tcp://127.0.0.1:\(second.port)?user=cam&password=s3cret&api_key=s3cret&channel=2", "--detector", "haar"
        ])
        defer { framekit.stop() }
        let port = framekit.port
        // Until both streams' series appear (a source is registered once it is open).
        let text = try metrics(port) { $0.components(separatedBy: "framekit_frames_captured_total{").count == 3 }
        #expect(text.contains("source=\"tcp://admin:***@127.0.0.1:\(stream.port)\""), "\(text.prefix(600))")
        #expect(
            text.contains("source=\"tcp://127.0.0.1:\(second.port)?user=cam&password=***&api_key=***&channel=2\""), "\(text.prefix(900))")
        #expect(!text.contains("s3cret"))
        try lint(text, "a fleet's page")
    }

    @Test("a batch's /metrics shows the input under way as its source (it showed none), and passes promtool")
    func batch() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("clip.mp4")
        try FFmpegTool.clip(clip, frames: 150, codec: ["-c:v", "libx264"]) // 5 s at its pace
        let list = folder.appendingPathComponent("inputs.txt")
        try Data((clip.path + "\n").utf8).write(to: list)
        let framekit = try serving([
            "detect", "--detector", "haar", "--realtime", "--inputs", list.path, "--output-dir", folder.appendingPathComponent("out").path
        ])
        defer { framekit.stop() }
        let delivered = "framekit_frames_delivered_total{source=\"\(clip.path)\"}"
        let text = try metrics(framekit.port) { (value($0, delivered) ?? 0) > 0 }
        #expect((value(text, delivered) ?? 0) > 0, "\(text.prefix(600))")
        try lint(text, "a batch's page")
    }

    @Test("healthz turns 503 when the source stalls (a stream gone and being reconnected)")
    func stalled() throws {
        try #require(FFmpegTool.isInstalled)
        let stream = try FFmpegTool.liveStream(seconds: 2)
        defer { stream.stop() }
        let framekit = try serving(["detect", "--input", stream.url, "--reconnect", "100"], host: nil)
        defer { framekit.stop() }
        let port = framekit.port
        // Healthy while frames come (healthz is 200 in the start-up grace too: wait for frames).
        let source = "framekit_frames_captured_total{source=\"\(stream.url)\"}"
        _ = try metrics(port) { (value($0, source) ?? 0) > 0 }
        #expect(try get(port, "/healthz").status == 200)
        // The stream ends after 2 s; 5 s without a frame is a stall.
        var status = 0
        let deadline = Date().addingTimeInterval(60)
        while status != 503 && Date() < deadline {
            status = try get(port, "/healthz").status
            if status != 503 { Thread.sleep(forTimeInterval: 0.25) }
        }
        #expect(status == 503)
        #expect(try get(port, "/metrics").body.contains("framekit_last_frame_age_seconds{source=\"\(stream.url)\"}"))
    }

    @Test("preview --metrics serves beside the page; a bad address is a usage error")
    func preview() throws {
        let port = FreePort.next()
        let preview = try RunningPreview.start(
            ["preview", "--port", "0", "--device", "virtual", "--duration", "20", "--metrics", "127.0.0.1:\(port)"])
        defer { preview.stop() }
        let delivered = "framekit_frames_delivered_total{source=\"virtual\"}"
        _ = try metrics(port) { (value($0, delivered) ?? 0) > 0 }
        let metrics = try get(port, "/metrics")
        #expect(metrics.status == 200 && (value(metrics.body, delivered) ?? 0) > 0)
        #expect(try RawHTTP.request(port: preview.port, "GET", "/").status == 200)
        // Each viewer of a stream: what it was sent, its rate, what it skipped.
        let viewer = try RawHTTP(port: preview.port)
        viewer.send("GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        _ = viewer.read(for: 1)
        let sent = "framekit_preview_viewer_sent_bytes_total{stream=\"mjpeg\",viewer=\"1\"}"
        let text = try self.metrics(port) { (value($0, sent) ?? 0) > 0 }
        #expect(text.contains("# TYPE framekit_preview_viewer_skipped_frames_total counter"), "\(text.suffix(800))")
        #expect((value(text, "framekit_preview_viewer_bytes_per_second{stream=\"mjpeg\",viewer=\"1\"}") ?? 0) > 0)
        try lint(text, "preview's page")
        // That port taken (by this preview's endpoint): exit 69, said of --metrics, not of a preview.
        let taken = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "1", "--metrics", "127.0.0.1:\(port)"])
        #expect(
            taken.status == 69 && taken.stderr.contains("--metrics 127.0.0.1:\(port): bind") && !taken.stderr.contains("preview"),
            "\(taken.status) \(taken.stderr)")
        let bad = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "1", "--metrics", "host:port:x"])
        #expect(bad.status == 64)
        #expect(try BinaryRunner.run("framekit", ["preview", "--bitrate", "10"]).status == 64) // below 100 kbit/s
    }
}
