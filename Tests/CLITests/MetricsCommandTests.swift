import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("--metrics: Prometheus text and a health check from the running binary")
struct MetricsCommandTests {
    /// `framekit ARGS`, running; stopped with SIGINT by the caller.
    func start(_ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = BinaryRunner.productsFolder.appendingPathComponent("framekit")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
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

    /// The value of the series `name{labels}` in Prometheus text.
    func value(_ text: String, _ series: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
    }

    @Test("detect --metrics: monotonic counters by source and reason, cumulative histograms, healthz 200, nothing else served")
    func detect() throws {
        let port = FreePort.next()
        let process = try start(["detect", "--device", "virtual", "--preset", "vga640x480", "--metrics", "127.0.0.1:\(port)"])
        defer {
            process.interrupt()
            process.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 1.5)
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
        #expect(try get(port, "/healthz").status == 200)
        #expect(try get(port, "/").status == 404 && get(port, "/stream.mjpeg").status == 404)
    }

    @Test("healthz turns 503 when the source stalls (a stream gone and being reconnected)")
    func stalled() throws {
        let streamPort = FreePort.next()
        let server = try FFmpegTool.serveTCP(port: streamPort, seconds: 2)
        defer { server.terminate() }
        Thread.sleep(forTimeInterval: 0.7)
        let port = FreePort.next()
        let process = try start(["detect", "--input", "tcp://127.0.0.1:\(streamPort)", "--reconnect", "100", "--metrics", "\(port)"])
        defer {
            process.interrupt()
            process.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 1)
        #expect(try get(port, "/healthz").status == 200)
        // The stream ends after 2 s; 5 s without a frame is a stall.
        var status = 0
        for _ in 0..<40 {
            status = try get(port, "/healthz").status
            if status == 503 { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        #expect(status == 503)
        #expect(try get(port, "/metrics").body.contains("framekit_last_frame_age_seconds{source=\"tcp://127.0.0.1:\(streamPort)\"}"))
    }

    @Test("preview --metrics serves beside the page; a bad address is a usage error")
    func preview() throws {
        let port = FreePort.next()
        let preview = try RunningPreview.start(
            ["preview", "--port", "0", "--device", "virtual", "--duration", "20", "--metrics", "127.0.0.1:\(port)"])
        defer { preview.stop() }
        Thread.sleep(forTimeInterval: 1)
        let metrics = try get(port, "/metrics")
        #expect(metrics.status == 200 && (value(metrics.body, "framekit_frames_delivered_total{source=\"virtual\"}") ?? 0) > 0)
        #expect(try RawHTTP.request(port: preview.port, "GET", "/").status == 200)
        let bad = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "1", "--metrics", "host:port:x"])
        #expect(bad.status == 64)
    }
}
