import Foundation
import FrameKit
import FrameKitCommands

/// Recall, precision and speed of each detector, per split and kind of clip (one row each).
struct DetectionResult: Codable {
    var split: String
    var kind: String
    /// `framekit` (the default: CNN, tracking), `framekit-cli` (`framekit detect --input`, the
    /// whole process), `cnn-full` (the CNN on every frame), `haar-full` (OpenCV's Haar cascade
    /// on every frame at half resolution, the Python peer's parameters), `python-haar` (the
    /// Python peer itself, Benchmarks/Peers/haar_peer.py).
    var detector: String
    var clips: Int
    var frames: Int
    var recall: Double
    var precision: Double
    /// Results per second: in-process, frames over the detector's time on one caller thread;
    /// for `framekit-cli` and `python-haar`, the process's own figure (decoding included).
    var results_per_s: Double
    var ms_p50: Double
    var ms_p99: Double
}

/// `framekit detect --input clip --realtime`: the paced run (a camera's timing).
struct RealTimeResult: Codable {
    var kind: String
    var size: String
    /// Busy loops run beside it (0: an idle machine; 2: both cores shared, as users run it).
    /// Optional, as the next two: baselines written before they were measured lack them.
    var busy_loops: Int?
    /// The tracker's passes (the summary's `detection_passes`): p50 latency and oldest result.
    var pass_p50_ms: Double?
    var result_age_max_frames: Int?
    var results_fps: Double
    var frames_captured: Int
    var frames_delivered: Int
    var frame_was_late: Int
    var processing_p99_ms: Double
    var latency_p99_ms: Double
    var recall: Double
    var precision: Double
    var command: String
    /// Sources in the process (4: one of a fleet run together, each its own row); absent: 1.
    var sources: Int? = nil
}

enum DetectionSuite {
    struct Settings {
        var splits: [Corpus.Split]
        var kinds: [ClipKind]
        var seedsPerKind: Int
        var frames: Int
        var framekit: URL?
        var python: URL?
        /// The MediaPipe peer's Python (Benchmarks/Peers/setup-mediapipe's virtual environment), if installed.
        var mediapipe: URL? = nil
        var work: URL
        /// Where to keep each clip (`NAME.mjpeg`) and its truth (`NAME.truth.json`), if anywhere.
        var keep: URL? = nil
        /// Which detectors to run (default all; see ``DetectionResult/detector``).
        var detectors: Set<String> = DetectionSuite.allDetectors
        /// Extra arguments for `framekit detect` (tuning: `--score-threshold 0.4`).
        var detectArguments: [String] = []
    }

    static let allDetectors: Set<String> = [
        "framekit", "framekit-cli", "framekit-cli-mp4", "cnn-full", "haar-full", "python-haar", "mediapipe"
    ]

    /// What one detector did on one clip.
    struct Run {
        var accuracy = Accuracy()
        var times: [Double] = []
        var resultsPerSecond: Double? = nil
    }

    static func run(corpus: Corpus, settings: Settings, peer: URL) throws -> (results: [DetectionResult], realtime: [RealTimeResult]) {
        var results: [DetectionResult] = []
        for split in settings.splits {
            for kind in settings.kinds {
                var runs: [String: [Run]] = [:]
                var frames = 0
                var clips = 0
                for seed in corpus.seeds[split, default: []].prefix(settings.seedsPerKind) {
                    let clip = try ClipRenderer.render(kind: kind, seed: seed, frames: settings.frames, corpus: corpus, split: split)
                    let decoded = try clip.frames()
                    frames += decoded.count
                    clips += 1
                    log(
                        "  \(split.rawValue) \(clip.name): \(decoded.count) frames \(clip.width)x\(clip.height), JPEG quality \(clip.jpegQuality)"
                    )
                    for (name, detect) in try inProcessDetectors() where settings.detectors.contains(name) {
                        let run = try measure(decoded, clip.truth, detect)
                        runs[name, default: []].append(run)
                    }
                    // (The peers and the MP4 copy read `photos` as a clip too; the CLI reads the folder.)
                    let file = settings.work.appendingPathComponent("\(clip.name).mjpeg")
                    try clip.mjpeg.write(to: file)
                    if let framekit = settings.framekit, settings.detectors.contains("framekit-cli") {
                        let input = try clip.write(in: settings.work)
                        defer { if input != file { try? FileManager.default.removeItem(at: input) } }
                        runs["framekit-cli", default: []].append(
                            try runCLI(
                                framekit, file: input, truth: clip.truth,
                                extra: settings.detectArguments
                            ).run)
                    }
                    // The same clip as H.264 in MP4 (Debian's ffmpeg, CRF 18): the CLI through libavcodec.
                    if let framekit = settings.framekit, settings.detectors.contains("framekit-cli-mp4") {
                        let mp4 = settings.work.appendingPathComponent("\(clip.name).mp4")
                        try? FileManager.default.removeItem(at: mp4)
                        do {
                            _ = try runProcess(
                                URL(fileURLWithPath: "/usr/bin/ffmpeg"),
                                [
                                    "-nostdin", "-loglevel", "error", "-i", file.path, "-c:v", "libx264", "-crf", "18", "-pix_fmt",
                                    "yuv420p", mp4.path
                                ])
                            runs["framekit-cli-mp4", default: []].append(
                                try runCLI(framekit, file: mp4, truth: clip.truth, extra: settings.detectArguments).run)
                        } catch {
                            log("  framekit-cli-mp4 skipped: \(error) (scripts/bootstrap installs ffmpeg)")
                        }
                        try? FileManager.default.removeItem(at: mp4)
                    }
                    // The Python peer is slow (~3 frames/s): one clip of each kind.
                    if let python = settings.python, clips == 1, settings.detectors.contains("python-haar") {
                        do {
                            runs["python-haar", default: []].append(try runPeer(python, script: peer, file: file, truth: clip.truth))
                        } catch {
                            log("  python-haar skipped: \(error) (scripts/bootstrap installs python3-opencv)")
                        }
                    }
                    // MediaPipe Face Detection (BlazeFace full range): the peer a user would pick.
                    if let mediapipe = settings.mediapipe, settings.detectors.contains("mediapipe") {
                        do {
                            let script = peer.deletingLastPathComponent().appendingPathComponent("mediapipe_peer.py")
                            runs["mediapipe", default: []].append(try runPeer(mediapipe, script: script, file: file, truth: clip.truth))
                        } catch {
                            log("  mediapipe skipped: \(error)")
                        }
                    }
                    try keepOrRemove(file, truth: clip.truth, in: settings.keep)
                }
                for name in ["framekit", "framekit-cli", "framekit-cli-mp4", "cnn-full", "haar-full", "python-haar", "mediapipe"] {
                    guard let list = runs[name], !list.isEmpty else { continue }
                    let accuracy = list.map(\.accuracy).reduce(Accuracy(), +)
                    let times = list.flatMap(\.times).sorted()
                    let rate = list.compactMap(\.resultsPerSecond)
                    let perSecond =
                        rate.isEmpty ? Double(times.count) / max(1e-9, times.reduce(0, +)) : rate.reduce(0, +) / Double(rate.count)
                    results.append(
                        DetectionResult(
                            split: split.rawValue, kind: kind.rawValue, detector: name, clips: list.count,
                            frames: name == "python-haar" ? list.count * settings.frames : frames,
                            recall: accuracy.recall, precision: accuracy.precision, results_per_s: perSecond,
                            ms_p50: percentile(times, 0.5) * 1000, ms_p99: percentile(times, 0.99) * 1000))
                }
            }
        }

        // Paced runs: the report split's moving faces at 720p and 1080p, as a 30 fps camera, on
        // an idle machine and with two busy loops on the two cores (a machine shared with other
        // work: real time that holds only when idle is not real time). Each with its kinds
        // (--kinds photos runs none).
        var realtime: [RealTimeResult] = []
        if let framekit = settings.framekit, let seed = corpus.seeds[.report]?.first, settings.detectors.contains("framekit-cli") {
            for kind in [ClipKind.moving, .fullHD] where settings.kinds.contains(kind) {
                let clip = try ClipRenderer.render(kind: kind, seed: seed, frames: max(90, settings.frames), corpus: corpus, split: .report)
                let file = settings.work.appendingPathComponent("realtime-\(clip.name).mjpeg")
                try clip.mjpeg.write(to: file)
                for busyLoops in [0, 2] {
                    let load = try BusyLoops(count: busyLoops)
                    let (run, summary, command) = try runCLI(
                        framekit, file: file, truth: clip.truth, realtime: true, extra: settings.detectArguments)
                    load.stop()
                    realtime.append(realTimeRow(kind: kind, clip: clip, busyLoops: busyLoops, run: run, summary: summary, command: command))
                }
                try? FileManager.default.removeItem(at: file)
            }
            // A fleet: four paced 720p report clips of four kinds in one process (several
            // --input, as network cameras are run), each scored on its own. Ten seconds, not
            // three: four sources' start-up (each one's first sweep of tiles, turn by turn on
            // the shared lanes) takes seconds, and cameras run for hours after it.
            let kinds: [ClipKind] = [.moving, .crowd, .crowdPan, .enterLeave]
            guard Set(kinds).isSubset(of: settings.kinds) else { return (results, realtime) }
            let clips = try kinds.map {
                try ClipRenderer.render(kind: $0, seed: seed, frames: max(300, settings.frames), corpus: corpus, split: .report)
            }
            let files = clips.map { settings.work.appendingPathComponent("fleet-\($0.name).mjpeg") }
            for (clip, file) in zip(clips, files) { try clip.mjpeg.write(to: file) }
            for busyLoops in [0, 2] {
                let load = try BusyLoops(count: busyLoops)
                let (runs, command) = try runFleet(framekit, files: files, truths: clips.map(\.truth), extra: settings.detectArguments)
                load.stop()
                for ((clip, kind), (run, summary)) in zip(zip(clips, kinds), runs) {
                    realtime.append(
                        realTimeRow(kind: kind, clip: clip, busyLoops: busyLoops, run: run, summary: summary, command: command, sources: 4))
                }
            }
            for (clip, file) in zip(clips, files) { try keepOrRemove(file, truth: clip.truth, in: settings.keep) }
        }
        return (results, realtime)
    }

    /// A clip once measured: moved into `keep` with its truth beside it (NAME.mjpeg,
    /// NAME.truth.json), or removed.
    static func keepOrRemove(_ file: URL, truth: [[TruthFace]], in keep: URL?) throws {
        guard let keep else {
            try? FileManager.default.removeItem(at: file)
            return
        }
        let kept = keep.appendingPathComponent(file.lastPathComponent)
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.moveItem(at: file, to: kept)
        try JSONEncoder().encode(truth).write(to: kept.deletingPathExtension().appendingPathExtension("truth.json"))
    }

    /// A paced run's row from its accuracy and its summary line.
    static func realTimeRow(
        kind: ClipKind, clip: Clip, busyLoops: Int, run: Run, summary: [String: Any], command: String, sources: Int? = nil
    ) -> RealTimeResult {
        let drops = summary["drops"] as? [String: Int] ?? [:]
        let latency = summary["latency_ms"] as? [String: Double] ?? [:]
        let processing = summary["processing_ms"] as? [String: Double] ?? [:]
        let passes = summary["detection_passes"] as? [String: Any] ?? [:]
        return RealTimeResult(
            kind: kind.rawValue, size: "\(clip.width)x\(clip.height)", busy_loops: busyLoops,
            pass_p50_ms: (passes["latency_ms"] as? [String: Double])?["p50"] ?? 0,
            result_age_max_frames: (passes["result_age_frames"] as? [String: Any])?["max"] as? Int ?? 0,
            results_fps: summary["fps"] as? Double ?? 0,
            frames_captured: summary["frames_captured"] as? Int ?? 0,
            frames_delivered: summary["frames_delivered"] as? Int ?? 0,
            frame_was_late: drops["frame_was_late"] ?? 0,
            processing_p99_ms: processing["p99"] ?? 0, latency_p99_ms: latency["p99"] ?? 0,
            recall: run.accuracy.recall, precision: run.accuracy.precision, command: command, sources: sources)
    }

    /// The detectors run in this process, each fresh for every clip (a tracker follows one video).
    static func inProcessDetectors() throws -> [(String, (PixelBuffer) throws -> [Face])] {
        let tracker = try FaceTracker(detector: try FaceDetector())
        let cnn = try FaceDetector()
        let haar = try HaarFaceDetector(options: .init(scaleFactor: 1.1, minNeighbors: 3, detectionScale: 0.5))
        return [
            ("framekit", { try tracker.faces(in: $0) }),
            ("cnn-full", { try cnn.detect(in: $0) }),
            ("haar-full", { try haar.detect(in: $0) })
        ]
    }

    private static func measure(_ frames: [PixelBuffer], _ truth: [[TruthFace]], _ detect: (PixelBuffer) throws -> [Face]) throws -> Run {
        var run = Run()
        for (frame, truth) in zip(frames, truth) {
            let start = Timestamp.now()
            let faces = try detect(frame)
            run.times.append(Timestamp.now().seconds(since: start))
            run.accuracy.add(found: faces.map(\.bounds), truth: truth)
        }
        return run
    }

    /// `framekit detect --input FILE` (as fast as read, or paced): accuracy from its JSON lines;
    /// frames it dropped count as missed.
    static func runCLI(_ framekit: URL, file: URL, truth: [[TruthFace]], realtime: Bool = false, extra: [String] = []) throws
        -> (run: Run, summary: [String: Any], command: String)
    {
        let arguments = ["detect", "--input", file.path] + (realtime ? ["--realtime"] : []) + extra
        let (run, summary) = cliRun(try runProcess(framekit, arguments), truth: truth)
        return (run, summary, "framekit " + arguments.map { $0 == file.path ? file.lastPathComponent : $0 }.joined(separator: " "))
    }

    /// A run of `framekit detect` from what it printed: accuracy from its JSON lines (frames it
    /// dropped count as missed), its summary, and its own results/s.
    static func cliRun(_ output: Data, truth: [[TruthFace]]) -> (run: Run, summary: [String: Any]) {
        var run = Run()
        var summary: [String: Any] = [:]
        var seen = Set<Int>()
        for line in output.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if let s = object["summary"] as? [String: Any] {
                summary = s
                continue
            }
            guard let index = object["frame"] as? Int, index < truth.count, let faces = object["faces"] as? [[String: Any]] else {
                continue
            }
            seen.insert(index)
            run.accuracy.add(found: faces.map { rect($0) }, truth: truth[index])
        }
        for (i, t) in truth.enumerated() where !seen.contains(i) { run.accuracy.add(found: [], truth: t) }
        run.resultsPerSecond = summary["fps"] as? Double
        if let p = summary["processing_ms"] as? [String: Double] { run.times = [(p["p50"] ?? 0) / 1000] }
        return (run, summary)
    }

    /// `framekit detect --input A --input B … --realtime` in one process: each file's run and
    /// summary (lines are told apart by their `source`, the file's path), and the command.
    static func runFleet(_ framekit: URL, files: [URL], truths: [[[TruthFace]]], extra: [String]) throws
        -> (runs: [(run: Run, summary: [String: Any])], command: String)
    {
        let arguments = ["detect"] + files.flatMap { ["--input", $0.path] } + ["--realtime"] + extra
        let output = try runProcess(framekit, arguments)
        var runs = files.map { _ in (run: Run(), summary: [String: Any]()) }
        var seen = files.map { _ in Set<Int>() }
        func index(_ source: Any?) -> Int? {
            guard let source = source as? String else { return nil }
            return files.firstIndex { source == $0.path } ?? files.firstIndex { source.hasSuffix("/" + $0.lastPathComponent) }
        }
        for line in output.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if let s = object["summary"] as? [String: Any] {
                if let i = index(s["source"]) { runs[i].summary = s }
                continue
            }
            guard let i = index(object["source"]), let frame = object["frame"] as? Int, frame < truths[i].count,
                let faces = object["faces"] as? [[String: Any]]
            else { continue }
            seen[i].insert(frame)
            runs[i].run.accuracy.add(found: faces.map { rect($0) }, truth: truths[i][frame])
        }
        for i in files.indices {
            for (frame, truth) in truths[i].enumerated() where !seen[i].contains(frame) {
                runs[i].run.accuracy.add(found: [], truth: truth)
            }
        }
        let names = Dictionary(uniqueKeysWithValues: files.map { ($0.path, $0.lastPathComponent) })
        return (runs, "framekit " + arguments.map { names[$0] ?? $0 }.joined(separator: " "))
    }

    static func runPeer(_ python: URL, script: URL, file: URL, truth: [[TruthFace]]) throws -> Run {
        peerRun(try runProcess(python, [script.path, file.path]), truth: truth)
    }

    /// A peer's run from what it printed: a JSON line of boxes per frame, then its frames per second.
    static func peerRun(_ output: Data, truth: [[TruthFace]]) -> Run {
        var run = Run()
        for line in output.split(separator: UInt8(ascii: "\n")) {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if let fps = object["fps"] as? Double {
                run.resultsPerSecond = fps
                continue
            }
            guard let index = object["frame"] as? Int, index < truth.count, let faces = object["faces"] as? [[Int]] else { continue }
            run.accuracy.add(found: faces.map { Rect(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) }, truth: truth[index])
        }
        return run
    }

    static func rect(_ face: [String: Any]) -> Rect {
        Rect(x: face["x"] as? Int ?? 0, y: face["y"] as? Int ?? 0, width: face["width"] as? Int ?? 0, height: face["height"] as? Int ?? 0)
    }

    static func runProcess(_ executable: URL, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RuntimeError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return output
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p + 0.5))]
    }
}

/// Processes that keep cores busy while a paced run is measured (a shell loop that ends with the bench),
/// ended by ``stop()`` or when the value goes.
final class BusyLoops {
    private var processes: [Process] = []

    init(count: Int) throws {
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            // Busy, and gone within ~0.1 s of the bench (a bench killed mid-run left its loops
            // running, and every run after it measured beside them).
            process.arguments = [
                "-c", "while kill -0 \(getpid()) 2>/dev/null; do i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; done"
            ]
            try process.run()
            processes.append(process)
        }
    }

    func stop() {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        processes = []
    }

    deinit { stop() }
}
