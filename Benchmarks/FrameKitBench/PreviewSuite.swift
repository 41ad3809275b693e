import Foundation
import FrameKit
import FrameTestSupport
import Synchronization

/// The live preview as a browser gets it (#33): `framekit preview` on the virtual camera at
/// 720p with `--stamp-capture-time`, watched by a real headless Chromium
/// (Tests/FrameTestSupport/Fixtures/chromium_probe.py) as `/?latency` (H.264 through MSE) and
/// `/?latency&mjpeg` (the MJPEG picture) in the same run, idle and beside two busy loops: each
/// stream's bytes a second (the server's count for that viewer) and capture-to-screen latency
/// (each shown frame's stamp read back in the page against the clock; the first 2 s of
/// samples, the page's start-up, left out). Then one encode for many:
/// framekit's CPU with one H.264 viewer and with ten.
struct PreviewResult: Codable {
    /// `h264` or `mjpeg`.
    var stream: String
    var size: String
    var viewers: Int
    var busy_loops: Int
    /// The browser's (or, with ten viewers, each plain viewer's) bytes a second.
    var bytes_per_s: Double
    /// Capture to screen in Chromium (nil for the plain viewers).
    var latency_p50_ms: Double?
    var latency_p95_ms: Double?
    /// framekit's CPU time over the watch, in percent of one core.
    var cpu_percent_of_core: Double
}

enum PreviewSuite {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static let latencyProbe = """
        (() => {
          const l = window.framekitLatency || {samples: [], times: []};
          const s = l.samples.filter((_, i) => l.times[i] - l.times[0] > 2000).sort((a, b) => a - b); // after start-up
          const q = p => s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : null;
          return {samples: s.length, p50: q(0.5), p95: q(0.95)};
        })()
        """

    static func run(seconds: Double) throws -> [PreviewResult] {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else {
            log("preview: skipped (no /usr/bin/chromium; scripts/bootstrap installs it)")
            return []
        }
        var rows: [PreviewResult] = []
        for busy in [0, 2] {
            for stream in ["h264", "mjpeg"] {
                rows.append(try browser(stream: stream, busy: busy, seconds: seconds))
            }
        }
        for viewers in [1, 10] { rows.append(try plainViewers(count: viewers, seconds: seconds)) }
        return rows
    }

    /// A preview of the virtual camera at 720p, stamping capture times, room for many viewers.
    static func start() throws -> RunningPreview {
        try RunningPreview.start([
            "preview", "--port", "0", "--duration", "600", "--device", "virtual", "--preset", "hd1280x720", "--stamp-capture-time",
            "--max-clients", "16"
        ])
    }

    /// The process's user + system CPU seconds so far (/proc/PID/stat, clock ticks of 1/100 s).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, utime 14 and stime 15 (1-based, whole line).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The bytes a second of the viewer of `stream` that `/stats.json` lists.
    static func viewerRate(port: Int, stream: String) -> Double {
        guard let stats = try? RawHTTP.request(port: port, "GET", "/stats.json"),
            let object = (try? JSONSerialization.jsonObject(with: Data(stats.body))) as? [String: Any],
            let viewers = object["viewers"] as? [[String: Any]]
        else { return 0 }
        let rates = viewers.filter { $0["stream"] as? String == stream }.compactMap {
            $0["bytes_per_s"] as? Double ?? ($0["bytes_per_s"] as? Int).map(Double.init)
        }
        return rates.max() ?? 0
    }

    static func browser(stream: String, busy: Int, seconds: Double) throws -> PreviewResult {
        let preview = try start()
        defer { preview.stop() }
        let (process, port) = (preview.process, preview.port)
        let loops = busy > 0 ? try BusyProcesses(count: busy, seconds: Int(seconds) + 120) : nil
        defer { loops?.stop() }
        let cpuStart = cpuSeconds(process.processIdentifier)
        let clock = Timestamp.now()
        // The bytes-a-second figure is read while the page still watches: the viewer leaves with it.
        let rate = Mutex<Double>(0)
        let reader = Thread {
            Thread.sleep(forTimeInterval: max(2, seconds - 1))
            let measured = viewerRate(port: port, stream: stream)
            rate.withLock { $0 = measured }
        }
        reader.start()
        let path = stream == "h264" ? "/?latency" : "/?latency&mjpeg"
        let run = try BinaryRunner.runTool(
            "/usr/bin/python3",
            [
                Fixtures.folder.appendingPathComponent("chromium_probe.py").path, "http://127.0.0.1:\(port)\(path)", "\(seconds)",
                latencyProbe
            ],
            timeout: seconds + 180)
        let cpu = (cpuSeconds(process.processIdentifier) - cpuStart) / Timestamp.now().seconds(since: clock) * 100
        guard run.status == 0, let last = run.stdout.split(separator: "\n").last,
            let report = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any]
        else { throw Failure(description: "preview: chromium_probe failed: \(run.stderr.suffix(300))") }
        let number = { (key: String) in (report[key] as? Double) ?? (report[key] as? Int).map(Double.init) }
        return PreviewResult(
            stream: stream, size: "1280x720", viewers: 1, busy_loops: busy, bytes_per_s: rate.withLock { $0 },
            latency_p50_ms: number("p50"), latency_p95_ms: number("p95"), cpu_percent_of_core: cpu)
    }

    /// `count` plain viewers of /stream.mp4 (sockets that read everything): one encode for all.
    static func plainViewers(count: Int, seconds: Double) throws -> PreviewResult {
        let preview = try start()
        defer { preview.stop() }
        let (process, port) = (preview.process, preview.port)
        Thread.sleep(forTimeInterval: 1) // the camera and the tracker started
        let clients = try (0..<count).map { _ in try RawHTTP(port: port) }
        for client in clients { client.send("GET /stream.mp4 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }
        var total = 0
        let cpuStart = cpuSeconds(process.processIdentifier)
        let clock = Timestamp.now()
        // Round the clients, reading what each has: the server sends into their sockets meanwhile.
        while Timestamp.now().seconds(since: clock) < seconds {
            for client in clients { total += client.read(for: 0.01).count }
        }
        let elapsed = Timestamp.now().seconds(since: clock)
        let cpu = (cpuSeconds(process.processIdentifier) - cpuStart) / elapsed * 100
        for client in clients { client.close() }
        return PreviewResult(
            stream: "h264", size: "1280x720", viewers: count, busy_loops: 0,
            bytes_per_s: Double(total) / Double(count) / elapsed, latency_p50_ms: nil, latency_p95_ms: nil,
            cpu_percent_of_core: cpu)
    }
}
