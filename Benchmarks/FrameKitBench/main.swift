import Foundation
import FrameKit
import FrameKitCommands
import OpenCVReference

// framekit-bench: FrameKit's speed against baselines measured in the same run (OpenCV's own
// function on the same buffer, memcpy of the same bytes), and the real-time detection figures.
// See docs/performance.md.

struct Report: Codable {
    var quick: Bool
    var filters: [FilterResult]
    var capture: [CaptureResult]
    var detection: [DetectionResult]
    var realtime: [RealTimeResult]
    /// Absent from baselines made before #16.
    var decode: [DecodeResult]?
    /// Only with `--suite soak`.
    var soak: [SoakResult]?
    /// Absent from baselines made before #33.
    var preview: [PreviewResult]?
    /// Absent from baselines made before #49.
    var contention: [ContentionResult]? = nil
    /// Absent from baselines made before #51.
    var fleet_memory: [FleetMemoryResult]? = nil
    /// `--suite ablation`'s rows, one per rule, kind and split (never in a baseline).
    var ablation: [Ablation.Row]? = nil
}

/// framekit-bench's options, declared with the CLI's own parser (FrameKitCommands): one
/// declaration gives parsing, checking and --help.
enum BenchOptions {
    static let quick = Flag("quick", help: "Fewer runs and shorter clips (a few minutes, for CI).")
    static let paced = Flag("paced", help: "ablation: the tracker at a camera's pace (the background schedule), not as read.")
    static let suite = Option.text(
        "suite", "a,b,...",
        help:
            "Suites to run: filters, capture, decode, detection, contention, fleet-memory, preview, tune, ablation, soak (default filters,capture,decode,detection,contention,fleet-memory,preview; ablation: each tracker rule off in turn on --split, as read; soak: memory over --minutes; contention: framekit detect and MediaPipe idle, beside two busy loops, pinned to one CPU and in a CPU quota of one; fleet-memory: framekit detect's peak memory with 1, 4 and 16 sources of 720p)."
    )
    static let filter = Option.text("filter", "NAME", help: "filters: only the filters whose name contains NAME.")
    static let split = Option.choice(
        "split", ["tune", "report", "all"], help: "detection: the corpus split to evaluate (default report; tune evaluates on tune only).")
    static let kinds = Option.text(
        "kinds", "K,...",
        help: "detection: only these kinds of clip (default all: \(ClipKind.allCases.map(\.rawValue).joined(separator: ","))).")
    static let keepClips = Option.text(
        "keep-clips", "DIR",
        help:
            "detection and contention: keep every clip in DIR (NAME.mjpeg, NAME.truth.json; the fleet's as fleet-NAME, contention's as contention-NAME)."
    )
    static let detectors = Option.text(
        "detectors", "D,...",
        help: "detection: only these detectors (framekit, framekit-cli, framekit-cli-mp4, cnn-full, haar-full, python-haar).")
    static let detectArgs = Option.text(
        "detect-args", "ARGS",
        help:
            "detection: extra arguments for framekit detect, one string; give it inline when it starts with dashes (--detect-args='--input-size 800')."
    )
    static let rules = Option.text(
        "rules", "R,...",
        help: "ablation: only the rules whose name contains one of R (the product's row and its repeat always run).")
    static let minutes = Option.number(
        "minutes", "M", 1...10_000, help: "soak: how long preview and detect run side by side, RSS sampled every 10 s (default 60).")
    static let json = Option.text("json", "FILE", help: "Write every figure as JSON (the baseline file's format).")
    static let compare = Option.text(
        "compare", "BASELINE.json",
        help:
            "Exit 1 when a filter's ratio to libyuv (or, where libyuv has no such operation, to OpenCV) grows beyond (1 + X) times the baseline's, when detection recall/precision (per split, kind and detector) falls more than 0.03 below it, or when framekit's results/s as a ratio to the same run's haar-full falls below the baseline's ratio divided by (1 + X)."
    )
    static let tolerance = Option.number(
        "tolerance", "X", 0...100, help: "X for --compare (default 1.5, what CI uses: a ratio may move by 2.5x before it fails).")
    static let specs = [
        quick.spec, paced.spec, suite.spec, filter.spec, split.spec, kinds.spec, keepClips.spec, detectors.spec, detectArgs.spec,
        rules.spec,
        minutes.spec,
        json.spec,
        compare.spec,
        tolerance.spec
    ]
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") {
    print(
        helpText(
            command: "framekit-bench", abstract: "FrameKit's speed and detection quality against baselines measured in the same run.",
            usage:
                "framekit-bench [--quick] [--suite filters,capture,decode,detection,contention,fleet-memory,preview,tune,ablation,soak] [--json FILE] [--compare BASELINE.json] ...",
            specs: BenchOptions.specs))
    exit(0)
}
let options: ParsedOptions
do { options = try ParsedOptions(arguments, specs: BenchOptions.specs, command: "framekit-bench") } catch {
    FileHandle.standardError.write(Data("framekit-bench: \(error)\n".utf8))
    exit(64)
}
let quick = options[BenchOptions.quick]
let suites = Set(
    (options[BenchOptions.suite] ?? "filters,capture,decode,detection,contention,fleet-memory,preview").split(separator: ",").map(
        String.init))
let tolerance = options[BenchOptions.tolerance] ?? 1.5
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
let fixtures = root.appendingPathComponent("Tests/FrameTestSupport/Fixtures")
let framekit = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("framekit")

func log(_ s: String) { FileHandle.standardError.write(Data((s + "\n").utf8)) }
func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func f(_ v: Double, _ d: Int = 3) -> String { String(format: "%.\(d)f", v) }

do {
    let coffee = try PixelBuffer(contentsOf: fixtures.appendingPathComponent("coffee.jpg"))
    var report = Report(quick: quick, filters: [], capture: [], detection: [], realtime: [], decode: nil)
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("framekit-bench-\(getpid())")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }

    if suites.contains("filters") {
        log("filters: FrameKit vs OpenCV (1 thread) vs memcpy, ns per pixel, median of \(quick ? 31 : 101) interleaved samples")
        report.filters = try FilterSuite.run(
            sizes: [(1280, 720), (1920, 1080)], runs: quick ? 31 : 101, filter: options[BenchOptions.filter], photo: coffee)
        print("(kernels: \(KernelDispatch.path.rawValue); FRAMEKIT_SIMD=baseline forces the baseline x86-64 build)")
        print(
            "\n" + pad("filter", 22) + pad("size", 11) + pad("framekit", 10) + pad("opencv", 10) + pad("libyuv", 10) + pad("memcpy", 10)
                + pad("ratio", 8) + pad("/libyuv", 9) + "spread")
        for r in report.filters {
            print(
                pad(r.name, 22) + pad(r.size, 11) + pad(f(r.framekit_ns_per_px), 10) + pad(f(r.opencv_ns_per_px), 10)
                    + pad(r.libyuv_ns_per_px.map { f($0) } ?? "—", 10) + pad(f(r.memcpy_ns_per_px), 10) + pad(f(r.ratio, 2) + "x", 8)
                    + pad(r.ratio_libyuv.map { f($0, 2) + "x" } ?? "—", 9) + f(r.spread, 2))
        }
    }
    if suites.contains("capture") {
        log("capture: virtual camera per preset, then files as fast as consumed")
        let seconds = quick ? 1.5 : 4.0
        for preset in [SessionPreset.vga640x480, .hd1280x720, .hd1920x1080] {
            report.capture.append(try CaptureSuite.run(device: .virtualCamera, name: "virtual", preset: preset, seconds: seconds))
        }
        report.capture.append(
            try CaptureSuite.run(device: .virtualCamera, name: "virtual", preset: .hd1280x720, seconds: seconds, format: .bgra32))
        // Files: a 720p Y4M (native I420) and a 720p MJPEG (decoded by libjpeg-turbo).
        var scene = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
        try Resize.bilinear(coffee, into: &scene)
        let i420 = try PixelFormatConversion.convert(scene, to: .i420)
        let frames = quick ? 60 : 240
        var y4m = Data("YUV4MPEG2 W1280 H720 F30:1 Ip A1:1 C420jpeg\n".utf8)
        let body = i420.packedBytes()
        for _ in 0..<frames {
            y4m.append(contentsOf: Array("FRAME\n".utf8))
            y4m.append(contentsOf: body)
        }
        let y4mURL = work.appendingPathComponent("clip.y4m")
        try y4m.write(to: y4mURL)
        report.capture.append(try CaptureSuite.run(device: .file(y4mURL), name: "y4m", preset: .high, seconds: nil))
        let jpeg = try JPEG.encode(scene, quality: 90)
        let mjpegURL = work.appendingPathComponent("clip.mjpeg")
        try Data((0..<frames).flatMap { _ in jpeg }).write(to: mjpegURL)
        report.capture.append(try CaptureSuite.run(device: .file(mjpegURL), name: "mjpeg", preset: .high, seconds: nil))
        print(
            "\n" + pad("source", 9) + pad("preset", 14) + pad("format", 11) + pad("fps", 9) + pad("deq→del p50", 13) + pad("p99 ms", 9)
                + pad("dropped", 9) + pad("copies", 8) + pad("cpu %", 8) + "rss MB")
        for r in report.capture {
            print(
                pad(r.source, 9) + pad(r.preset, 14) + pad(r.format, 11) + pad(f(r.fps, 1), 9) + pad(f(r.dequeue_to_delegate_ms_p50), 13)
                    + pad(f(r.dequeue_to_delegate_ms_p99), 9) + pad("\(r.frames_dropped)", 9) + pad("\(r.copies_per_frame)", 8)
                    + pad(f(r.cpu_percent_of_core, 1), 8) + f(r.rss_peak_mb, 1))
        }
    }
    if suites.contains("decode") {
        log("decode: H.264 files through FrameKit's source vs ffmpeg -f null on the same file, same threads")
        let decode = try DecodeSuite.run(work: work, frames: quick ? 150 : 300, runs: quick ? 3 : 5)
        report.decode = decode
        print("\n" + pad("decode", 12) + pad("frames", 8) + pad("threads", 9) + pad("framekit fps", 14) + pad("ffmpeg fps", 12) + "ratio")
        for r in decode {
            print(
                pad(r.size, 12) + pad("\(r.frames)", 8) + pad("\(r.threads)", 9) + pad(f(r.framekit_fps, 1), 14)
                    + pad(f(r.ffmpeg_fps, 1), 12)
                    + f(r.ratio_ffmpeg, 2) + "x")
        }
    }
    if suites.contains("preview") {
        log("preview: framekit preview (virtual camera, 720p) in headless Chromium, H.264 and MJPEG, idle and beside 2 busy loops")
        let rows = try PreviewSuite.run(seconds: quick ? 8 : 15)
        report.preview = rows
        print(
            "\n" + pad("preview", 9) + pad("viewers", 9) + pad("busy", 6) + pad("bytes/s", 11) + pad("p50 ms", 8) + pad("p95 ms", 8)
                + "cpu %")
        for r in rows {
            print(
                pad(r.stream, 9) + pad("\(r.viewers)", 9) + pad("\(r.busy_loops)", 6) + pad(f(r.bytes_per_s, 0), 11)
                    + pad(r.latency_p50_ms.map { f($0, 0) } ?? "-", 8) + pad(r.latency_p95_ms.map { f($0, 0) } ?? "-", 8)
                    + f(r.cpu_percent_of_core, 1))
        }
        for busy in [0, 2] {
            if let h = rows.first(where: { $0.stream == "h264" && $0.viewers == 1 && $0.busy_loops == busy && $0.latency_p50_ms != nil }),
                let m = rows.first(where: { $0.stream == "mjpeg" && $0.busy_loops == busy }), h.bytes_per_s > 0
            {
                print("(\(busy) busy loops: H.264 takes 1/\(f(m.bytes_per_s / h.bytes_per_s, 1)) of MJPEG's bytes)")
            }
        }
    }
    if suites.contains("detection") {
        // The filter suite pins OpenCV to one thread (a fair per-call comparison); detection
        // runs as the product does, on OpenCV's default threads (both cores).
        OpenCV.setThreads(-1)
        let corpus = try Corpus(folder: root.appendingPathComponent("Benchmarks/Corpus"))
        let splits: [Corpus.Split]
        switch options[BenchOptions.split] ?? "report" {
        case "all": splits = Corpus.Split.allCases
        case let name: splits = Corpus.Split(rawValue: name).map { [$0] } ?? [] // checked when parsed
        }
        var kinds = ClipKind.allCases
        if let names = options[BenchOptions.kinds] {
            kinds = try names.split(separator: ",").map { name in
                guard let kind = ClipKind(rawValue: String(name)) else { throw RuntimeError("unknown clip kind \(name)") }
                return kind
            }
        }
        let python = URL(fileURLWithPath: "/usr/bin/python3")
        let mediapipe = root.appendingPathComponent(".build/peers/mediapipe/bin/python")
        if !FileManager.default.isExecutableFile(atPath: mediapipe.path) {
            log("detection: no MediaPipe peer (Benchmarks/Peers/setup-mediapipe installs it)")
        }
        var settings = DetectionSuite.Settings(
            splits: splits, kinds: kinds, seedsPerKind: quick ? 2 : 5, frames: quick ? 30 : 60,
            framekit: framekit.flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil },
            python: FileManager.default.isExecutableFile(atPath: python.path) ? python : nil,
            mediapipe: FileManager.default.isExecutableFile(atPath: mediapipe.path) ? mediapipe : nil, work: work,
            keep: options[BenchOptions.keepClips].map { URL(fileURLWithPath: $0) })
        if let names = options[BenchOptions.detectors] { settings.detectors = Set(names.split(separator: ",").map(String.init)) }
        if let extra = options[BenchOptions.detectArgs] { settings.detectArguments = extra.split(separator: " ").map(String.init) }
        if let keep = settings.keep { try FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true) }
        log(
            "detection: \(splits.map(\.rawValue).joined(separator: "+")) split, \(kinds.count) kinds x \(settings.seedsPerKind) seeds x \(settings.frames) frames"
        )
        let (results, realtime) = try DetectionSuite.run(
            corpus: corpus, settings: settings,
            peer: root.appendingPathComponent("Benchmarks/Peers/haar_peer.py"))
        report.detection = results
        report.realtime = realtime
        print(
            "\n" + pad("split", 8) + pad("kind", 22) + pad("detector", 18) + pad("frames", 8) + pad("recall", 8) + pad("precision", 11)
                + pad("results/s", 11) + pad("ms p50", 9) + "ms p99")
        for r in results {
            print(
                pad(r.split, 8) + pad(r.kind, 22) + pad(r.detector, 18) + pad("\(r.frames)", 8) + pad(f(r.recall), 8)
                    + pad(f(r.precision), 11)
                    + pad(f(r.results_per_s, 1), 11) + pad(f(r.ms_p50, 1), 9) + f(r.ms_p99, 1))
        }
        for split in splits {
            let rows = results.filter { $0.split == split.rawValue }
            func rate(_ d: String) -> Double {
                let r = rows.filter { $0.detector == d }.map(\.results_per_s)
                return r.isEmpty ? 0 : r.reduce(0, +) / Double(r.count)
            }
            func recall(_ d: String) -> Double {
                let r = rows.filter { $0.detector == d }.map(\.recall)
                return r.isEmpty ? 0 : r.reduce(0, +) / Double(r.count)
            }
            if rate("framekit-cli") > 0 && rate("mediapipe") > 0 {
                print(
                    "\(split.rawValue): framekit detect \(f(rate("framekit-cli"), 1)) results/s = \(f(rate("framekit-cli") / rate("mediapipe"), 2))x "
                        + "MediaPipe's (\(f(rate("mediapipe"), 1))/s), at \(f(recall("framekit-cli") / max(1e-9, recall("mediapipe")), 2))x its recall "
                        + "(\(f(recall("framekit-cli"))) vs \(f(recall("mediapipe"))), mean over kinds), same run")
            }
            if rate("framekit-cli") > 0 && rate("python-haar") > 0 {
                print(
                    "\(split.rawValue): framekit detect \(f(rate("framekit-cli"), 1)) results/s = \(f(rate("framekit-cli") / rate("python-haar"), 1))x "
                        + "the Python Haar peer (\(f(rate("python-haar"), 2))/s), \(f(rate("framekit-cli") / max(1e-9, rate("haar-full")), 1))x "
                        + "OpenCV's Haar in process (\(f(rate("haar-full"), 1))/s), same run")
            }
        }
        print(
            "\n" + pad("realtime", 31) + pad("size", 11) + pad("busy", 6) + pad("results/s", 11) + pad("delivered", 11) + pad("late", 6)
                + pad("pass p50", 10) + pad("age max", 9) + pad("proc p99", 10) + pad("lat p99", 9) + pad("recall", 8) + "precision")
        for r in realtime {
            print(
                pad(r.kind + ((r.sources ?? 1) > 1 ? " (1 of \(r.sources ?? 1))" : ""), 31) + pad(r.size, 11)
                    + pad("\(r.busy_loops ?? 0)", 6) + pad(f(r.results_fps, 1), 11)
                    + pad("\(r.frames_delivered)/\(r.frames_captured)", 11) + pad("\(r.frame_was_late)", 6)
                    + pad(f(r.pass_p50_ms ?? 0, 0), 10) + pad("\(r.result_age_max_frames ?? 0)", 9)
                    + pad(f(r.processing_p99_ms, 1), 10) + pad(f(r.latency_p99_ms, 1), 9)
                    + pad(f(r.recall), 8) + f(r.precision))
        }
        if let command = realtime.first?.command { print("(command: \(command))") }
        if let command = realtime.first(where: { ($0.sources ?? 1) > 1 })?.command { print("(command: \(command))") }
    }

    if suites.contains("contention") {
        guard let framekit, FileManager.default.isExecutableFile(atPath: framekit.path) else {
            throw RuntimeError("contention: the framekit executable is not beside framekit-bench (swift build -c release)")
        }
        let corpus = try Corpus(folder: root.appendingPathComponent("Benchmarks/Corpus"))
        let mediapipe = root.appendingPathComponent(".build/peers/mediapipe/bin/python")
        let peer = FileManager.default.isExecutableFile(atPath: mediapipe.path) ? mediapipe : nil
        if peer == nil { log("contention: no MediaPipe peer (Benchmarks/Peers/setup-mediapipe installs it); framekit alone") }
        // FrameKit's Python package in the peer's environment (Benchmarks/Peers/setup-framekit-python).
        let python = peer.flatMap { peer -> URL? in
            let check = Process()
            check.executableURL = peer
            check.arguments = ["-c", "import framekit"]
            check.standardError = FileHandle.nullDevice
            guard (try? check.run()) != nil else { return nil }
            check.waitUntilExit()
            return check.terminationStatus == 0 ? peer : nil
        }
        if peer != nil && python == nil {
            log("contention: no framekit in the peer's environment (Benchmarks/Peers/setup-framekit-python)")
        }
        // Real group photos under a moving camera, and synthetic moving faces.
        let kinds: [ClipKind] = quick ? [.crowdPan, .moving] : [.crowdPan, .crowd, .moving, .cuts]
        let frames = quick ? 90 : 150
        log(
            "contention: \(kinds.map(\.rawValue).joined(separator: ", ")), \(frames) frames, idle, 2 busy loops, pinned to CPU 0, a quota of 1 CPU"
        )
        let rows = try ContentionSuite.run(
            corpus: corpus, kinds: kinds, frames: frames, framekit: framekit, mediapipe: peer, framekitPython: python,
            peers: root.appendingPathComponent("Benchmarks/Peers"), work: work,
            keep: options[BenchOptions.keepClips].map { URL(fileURLWithPath: $0) })
        report.contention = rows
        ContentionSuite.print(rows)
    }

    if suites.contains("fleet-memory") {
        guard let framekit, FileManager.default.isExecutableFile(atPath: framekit.path) else {
            throw RuntimeError("fleet-memory: the framekit executable is not beside framekit-bench (swift build -c release)")
        }
        let seconds = quick ? 4.0 : 8.0
        log("fleet-memory: framekit detect with 1, 4 and 16 virtual cameras and 720p files (--realtime) at 720p, \(f(seconds, 0)) s each")
        let rows = try FleetMemorySuite.run(
            framekit: framekit, corpus: try Corpus(folder: root.appendingPathComponent("Benchmarks/Corpus")), seconds: seconds, work: work)
        report.fleet_memory = rows
        FleetMemorySuite.print(rows)
    }

    if suites.contains("tune") {
        let corpus = try Corpus(folder: root.appendingPathComponent("Benchmarks/Corpus"))
        log("tune: the tracker's options on the tune split (\(quick ? 2 : 5) seeds x \(quick ? 30 : 60) frames per kind)")
        let rows = try Tuning.run(corpus: corpus, frames: quick ? 30 : 60, seeds: quick ? 2 : 5)
        let kinds = ClipKind.allCases.map(\.rawValue)
        print(
            "\n" + pad("thr", 5) + pad("int", 4) + pad("quiet", 6) + pad("corr", 5) + pad("miss", 5) + pad("conf", 5) + pad("est", 4)
                + pad("passes/f", 9)
                + pad("worst F1", 9)
                + kinds.map { pad(String($0.prefix(13)), 14) }.joined())
        func row(_ r: Tuning.Row) -> String {
            let o = r.settings
            let options =
                pad(f(o.scoreThreshold, 1), 5) + pad("\(o.passInterval)", 4)
                + pad(o.quietInterval > o.passInterval ? "\(o.quietInterval)" : "-", 6) + pad(f(o.minCorrelation, 1), 5)
                + pad("\(o.maxMissedPasses)", 5) + pad(o.confirmationThreshold.map { f($0, 2) } ?? "-", 5)
                + pad("\(o.establishedAfter)", 4)
            let figures = kinds.map { pad(f(r.recall[$0] ?? 0, 2) + "/" + f(r.precision[$0] ?? 0, 2), 14) }.joined()
            return options + pad(f(r.passesPerFrame, 2), 9) + pad(f(r.worstF1), 9) + figures
        }
        for r in rows.prefix(25) { print(row(r)) }
        // What confirmation buys: the best row of each threshold and establishing count.
        print("(the best row of each confirmation threshold and establishing count:)")
        func group(_ r: Tuning.Row) -> (Double, Int) { (r.settings.confirmationThreshold ?? -1, r.settings.establishedAfter) }
        let best = Dictionary(grouping: rows) { "\(group($0))" }.values.compactMap(\.first)
        for r in best.sorted(by: { group($0) < group($1) }) {
            print(row(r))
        }
        print("(the best row of each quiet interval, '-': fixed:)")
        let bestQuiet = Dictionary(grouping: rows) { $0.settings.quietInterval > $0.settings.passInterval ? $0.settings.quietInterval : 0 }
        for (_, group) in bestQuiet.sorted(by: { $0.key < $1.key }) { if let r = group.first { print(row(r)) } }
        print("(recall/precision per kind; sorted by the worst kind's F1, then fewer passes)")
    }

    if suites.contains("ablation") {
        let corpus = try Corpus(folder: root.appendingPathComponent("Benchmarks/Corpus"))
        let splits: [Corpus.Split] =
            switch options[BenchOptions.split] ?? "report" {
            case "all": Corpus.Split.allCases
            case let name: Corpus.Split(rawValue: name).map { [$0] } ?? []
            }
        var kinds = ClipKind.allCases
        if let names = options[BenchOptions.kinds] { kinds = names.split(separator: ",").compactMap { ClipKind(rawValue: String($0)) } }
        let seeds = quick ? 2 : 5
        log(
            "ablation: each tracker rule off in turn, \(options[BenchOptions.paced] ? "paced" : "as read"), \(kinds.count) kinds x \(seeds) seeds x \(quick ? 30 : 60) frames"
        )
        let paced = options[BenchOptions.paced]
        let rules = options[BenchOptions.rules].map { $0.split(separator: ",").map(String.init) }
        let rows = try Ablation.run(
            corpus: corpus, splits: splits, kinds: kinds, seeds: seeds, frames: quick ? 30 : 60, paced: paced, rules: rules)
        Ablation.print(rows)
        report.ablation = rows
    }

    var soakProblems: [String] = []
    if suites.contains("soak") {
        guard let framekit else { throw SoakSuite.Failure(description: "soak: the framekit executable is not beside framekit-bench") }
        let minutes = options[BenchOptions.minutes] ?? 60
        log("soak: framekit preview and detect (virtual camera, 720p) for \(f(minutes, 0)) min, VmRSS every 10 s")
        let rows = try SoakSuite.run(framekit: framekit, minutes: minutes)
        report.soak = rows
        print("\n" + pad("command", 64) + pad("1 min", 8) + pad("warm min", 10) + pad("warm max", 10) + pad("end", 8) + "spread")
        for r in rows {
            print(
                pad(r.command, 64) + pad(f(r.rss_at_1_min_mb, 1), 8) + pad(f(r.rss_after_warmup_min_mb, 1), 10)
                    + pad(f(r.rss_after_warmup_max_mb, 1), 10) + pad(f(r.rss_end_mb, 1), 8) + f(r.spread * 100, 1) + "%")
            if r.spread > 0.05 { soakProblems.append("\(r.command): RSS spread \(f(r.spread * 100, 1))% after the warm-up (limit 5%)") }
        }
        print("(MB; warm: after \(f(min(10, minutes / 3), 1)) min; flat means a spread within 5%)")
    }

    if let path = options[BenchOptions.json] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(report).write(to: URL(fileURLWithPath: path))
    }
    if let path = options[BenchOptions.compare] {
        let baseline = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        var regressions: [String] = []
        for r in report.filters {
            guard let b = baseline.filters.first(where: { $0.name == r.name && $0.size == r.size }) else { continue }
            // Where libyuv ran too, its ratio is the one compared: it runs on the same buffers with
            // the same memory traffic, while a memory-bound kernel's ratio to OpenCV's
            // compute-bound code moves with the machine's memory bandwidth (yuyv-to-gray at 1080p
            // read 0.40x OpenCV against a baseline of 0.15x in runs whose memcpy was 3-4x slower
            // than the baseline's, while it stayed at 0.99-1.00x libyuv's time).
            if let ours = r.ratio_libyuv, let theirs = b.ratio_libyuv {
                if ours > theirs * (1 + tolerance) {
                    regressions.append("\(r.name) \(r.size): \(f(ours, 2))x libyuv's time vs baseline \(f(theirs, 2))x")
                }
            } else if r.ratio > b.ratio * (1 + tolerance) {
                regressions.append("\(r.name) \(r.size): ratio \(f(r.ratio, 2))x vs baseline \(f(b.ratio, 2))x")
            }
        }
        for r in report.detection {
            guard let b = baseline.detection.first(where: { $0.split == r.split && $0.kind == r.kind && $0.detector == r.detector }),
                b.frames == r.frames
            else { continue }
            if r.recall < b.recall - 0.03 || r.precision < b.precision - 0.03 {
                regressions.append(
                    "\(r.split) \(r.kind) \(r.detector): recall \(f(r.recall)) precision \(f(r.precision)) vs baseline \(f(b.recall)) / \(f(b.precision))"
                )
            }
        }
        // The preview: H.264's share of MJPEG's bytes in the same run, and the H.264 page's p95.
        for busy in [0, 2] {
            func pair(_ rows: [PreviewResult]?) -> (h264: PreviewResult, mjpeg: PreviewResult)? {
                guard let rows, let h = rows.first(where: { $0.stream == "h264" && $0.latency_p50_ms != nil && $0.busy_loops == busy }),
                    let m = rows.first(where: { $0.stream == "mjpeg" && $0.busy_loops == busy }), h.bytes_per_s > 0
                else { return nil }
                return (h, m)
            }
            guard let now = pair(report.preview), let then = pair(baseline.preview) else { continue }
            let ratio = now.mjpeg.bytes_per_s / now.h264.bytes_per_s
            let baseRatio = then.mjpeg.bytes_per_s / then.h264.bytes_per_s
            if ratio < baseRatio / (1 + tolerance) {
                regressions.append("preview (\(busy) busy): H.264 takes 1/\(f(ratio, 1)) of MJPEG's bytes vs baseline 1/\(f(baseRatio, 1))")
            }
            if let p95 = now.h264.latency_p95_ms, let base = then.h264.latency_p95_ms, p95 > base * (1 + tolerance) {
                regressions.append("preview (\(busy) busy): H.264 capture to screen p95 \(f(p95, 0)) ms vs baseline \(f(base, 0)) ms")
            }
        }
        for r in report.decode ?? [] {
            guard let b = baseline.decode?.first(where: { $0.size == r.size }) else { continue }
            if r.ratio_ffmpeg > b.ratio_ffmpeg * (1 + tolerance) {
                regressions.append("decode \(r.size): \(f(r.ratio_ffmpeg, 2))x ffmpeg's time vs baseline \(f(b.ratio_ffmpeg, 2))x")
            }
        }
        regressions += ContentionSuite.regressions(report.contention ?? [], baseline: baseline.contention ?? [], tolerance: tolerance)
        regressions += FleetMemorySuite.regressions(report.fleet_memory ?? [], baseline: baseline.fleet_memory ?? [])
        // Speed as a ratio to the same run's OpenCV Haar, per kind: immune to a slower machine.
        for r in report.detection where r.detector == "framekit-cli" {
            func haar(_ rows: [DetectionResult]) -> Double? {
                rows.first { $0.split == r.split && $0.kind == r.kind && $0.detector == "haar-full" }?.results_per_s
            }
            guard let h = haar(report.detection), h > 0,
                let b = baseline.detection.first(where: {
                    $0.split == r.split && $0.kind == r.kind && $0.detector == r.detector
                }), let bh = haar(baseline.detection), bh > 0
            else { continue }
            let ratio = r.results_per_s / h
            let baseRatio = b.results_per_s / bh
            if ratio < baseRatio / (1 + tolerance) {
                regressions.append("\(r.split) \(r.kind) framekit-cli: \(f(ratio, 2))x haar's results/s vs baseline \(f(baseRatio, 2))x")
            }
        }
        print(
            "\ncompare with \(path) (tolerance \(tolerance)): \(regressions.isEmpty ? "no regression" : "\(regressions.count) regression(s)")"
        )
        for r in regressions { print("  REGRESSION \(r)") }
        if !regressions.isEmpty { exit(1) }
    }
    // Growth is a failure on its own, baseline or not: flat is an absolute promise.
    for problem in soakProblems { print("  NOT FLAT \(problem)") }
    if !soakProblems.isEmpty { exit(1) }
} catch {
    log("framekit-bench: \(error)")
    exit(1)
}
