import Foundation
import FrameKit

// framekit-bench: FrameKit's speed against baselines measured in the same run (OpenCV's own
// function on the same buffer, memcpy of the same bytes), and the real-time detection figures.
// See docs/performance.md.

struct Report: Codable {
    var quick: Bool
    var filters: [FilterResult]
    var capture: [CaptureResult]
    var detection: [DetectionResult]
    var realtime: [RealTimeResult]
}

let usage = """
USAGE: framekit-bench [--quick] [--suite filters,capture,detection] [--filter NAME] [--json FILE] [--compare BASELINE.json] [--tolerance X]
  --quick        fewer runs and shorter clips (under 3 minutes, for CI)
  --compare F    exit 1 when a filter's ratio to OpenCV grows beyond (1 + X) times the baseline's,
                 or detection recall/precision falls more than 0.02 below it (X: --tolerance, default 0.75)
"""

let arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}
if arguments.contains("--help") { print(usage); exit(0) }
let known: Set<String> = ["--quick", "--suite", "--filter", "--json", "--compare", "--tolerance"]
for a in arguments where a.hasPrefix("--") && !known.contains(a) {
    FileHandle.standardError.write(Data("framekit-bench: unknown option \(a)\n".utf8))
    exit(64)
}
let quick = arguments.contains("--quick")
let suites = Set((option("--suite") ?? "filters,capture,detection").split(separator: ",").map(String.init))
let tolerance = Double(option("--tolerance") ?? "0.75") ?? 0.75
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let fixtures = root.appendingPathComponent("Tests/FrameTestSupport/Fixtures")
let framekit = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("framekit")

func log(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func f(_ v: Double, _ d: Int = 3) -> String { String(format: "%.\(d)f", v) }

do {
    let astronaut = try PixelBuffer(contentsOf: fixtures.appendingPathComponent("astronaut.jpg"))
    let coffee = try PixelBuffer(contentsOf: fixtures.appendingPathComponent("coffee.jpg"))
    var report = Report(quick: quick, filters: [], capture: [], detection: [], realtime: [])
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("framekit-bench-\(getpid())")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }

    if suites.contains("filters") {
        log("filters: FrameKit vs OpenCV (1 thread) vs memcpy, ns per pixel, median of \(quick ? 31 : 101) interleaved samples")
        report.filters = try FilterSuite.run(sizes: [(1280, 720), (1920, 1080)], runs: quick ? 31 : 101, filter: option("--filter"), photo: coffee)
        print("\n" + pad("filter", 22) + pad("size", 11) + pad("framekit", 10) + pad("opencv", 10) + pad("memcpy", 10) + pad("ratio", 8) + "spread")
        for r in report.filters {
            print(pad(r.name, 22) + pad(r.size, 11) + pad(f(r.framekit_ns_per_px), 10) + pad(f(r.opencv_ns_per_px), 10)
                  + pad(f(r.memcpy_ns_per_px), 10) + pad(f(r.ratio, 2) + "x", 8) + f(r.spread, 2))
        }
    }
    if suites.contains("capture") {
        log("capture: virtual camera per preset, then files as fast as consumed")
        let seconds = quick ? 1.5 : 4.0
        for preset in [SessionPreset.vga640x480, .hd1280x720, .hd1920x1080] {
            report.capture.append(try CaptureSuite.run(device: .virtualCamera, name: "virtual", preset: preset, seconds: seconds))
        }
        report.capture.append(try CaptureSuite.run(device: .virtualCamera, name: "virtual", preset: .hd1280x720, seconds: seconds, format: .bgra32))
        // Files: a 720p Y4M (native I420) and a 720p MJPEG (decoded by libjpeg-turbo).
        var scene = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
        try Resize.bilinear(coffee, into: &scene)
        let i420 = try PixelFormatConversion.convert(scene, to: .i420)
        let frames = quick ? 60 : 240
        var y4m = Data("YUV4MPEG2 W1280 H720 F30:1 Ip A1:1 C420jpeg\n".utf8)
        let body = i420.packedBytes()
        for _ in 0..<frames { y4m.append(contentsOf: Array("FRAME\n".utf8)); y4m.append(contentsOf: body) }
        let y4mURL = work.appendingPathComponent("clip.y4m")
        try y4m.write(to: y4mURL)
        report.capture.append(try CaptureSuite.run(device: .file(y4mURL), name: "y4m", preset: .high, seconds: nil))
        let jpeg = try JPEG.encode(scene, quality: 90)
        let mjpegURL = work.appendingPathComponent("clip.mjpeg")
        try Data((0..<frames).flatMap { _ in jpeg }).write(to: mjpegURL)
        report.capture.append(try CaptureSuite.run(device: .file(mjpegURL), name: "mjpeg", preset: .high, seconds: nil))
        print("\n" + pad("source", 9) + pad("preset", 14) + pad("format", 11) + pad("fps", 9) + pad("deq→del p50", 13) + pad("p99 ms", 9)
              + pad("dropped", 9) + pad("copies", 8) + pad("cpu %", 8) + "rss MB")
        for r in report.capture {
            print(pad(r.source, 9) + pad(r.preset, 14) + pad(r.format, 11) + pad(f(r.fps, 1), 9) + pad(f(r.dequeue_to_delegate_ms_p50), 13)
                  + pad(f(r.dequeue_to_delegate_ms_p99), 9) + pad("\(r.frames_dropped)", 9) + pad("\(r.copies_per_frame)", 8)
                  + pad(f(r.cpu_percent_of_core, 1), 8) + f(r.rss_peak_mb, 1))
        }
    }
    if suites.contains("detection") {
        log("detection: 720p clips with ground truth made from real photos")
        let face = try astronaut.cropped(to: Rect(x: 150, y: 20, width: 200, height: 230)).copy()
        let (inProcess, realTime) = try DetectionSuite.run(frames: quick ? 90 : 300, face: face, background: coffee, workFolder: work,
                                                           framekit: framekit.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil })
        report.detection = inProcess
        report.realtime = realTime
        print("\n" + pad("clip", 17) + pad("mode", 10) + pad("fps (1 thread)", 16) + pad("ms p50", 9) + pad("recall", 8) + "precision")
        for r in inProcess {
            print(pad(r.clip, 17) + pad(r.mode, 10) + pad(f(r.fps, 1), 16) + pad(f(r.ms_per_frame_p50, 2), 9) + pad(f(r.recall), 8) + f(r.precision))
        }
        print("\n" + pad("clip (realtime)", 17) + pad("mode", 10) + pad("results/s", 11) + pad("delivered", 11) + pad("dropped", 9)
              + pad("p50 ms", 9) + pad("p99 ms", 9) + pad("recall", 8) + "precision")
        for r in realTime {
            print(pad(r.clip, 17) + pad(r.mode, 10) + pad(f(r.results_fps, 1), 11) + pad("\(r.frames_delivered)", 11) + pad("\(r.frames_dropped)", 9)
                  + pad(f(r.latency_p50_ms, 1), 9) + pad(f(r.latency_p99_ms, 1), 9) + pad(f(r.recall), 8) + f(r.precision))
        }
        if let command = realTime.first?.command { print("(command: \(command))") }
    }

    if let path = option("--json") {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
    if let path = option("--compare") {
        let baseline = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        var regressions: [String] = []
        for r in report.filters {
            guard let b = baseline.filters.first(where: { $0.name == r.name && $0.size == r.size }) else { continue }
            if r.ratio > b.ratio * (1 + tolerance) {
                regressions.append("\(r.name) \(r.size): ratio \(f(r.ratio, 2))x vs baseline \(f(b.ratio, 2))x")
            }
        }
        for r in report.detection {
            guard let b = baseline.detection.first(where: { $0.clip == r.clip && $0.mode == r.mode }) else { continue }
            if r.recall < b.recall - 0.02 || r.precision < b.precision - 0.02 {
                regressions.append("\(r.clip) \(r.mode): recall \(f(r.recall)) precision \(f(r.precision)) vs baseline \(f(b.recall)) / \(f(b.precision))")
            }
        }
        print("\ncompare with \(path) (tolerance \(tolerance)): \(regressions.isEmpty ? "no regression" : "\(regressions.count) regression(s)")")
        for r in regressions { print("  REGRESSION \(r)") }
        if !regressions.isEmpty { exit(1) }
    }
} catch {
    log("framekit-bench: \(error)")
    exit(1)
}
