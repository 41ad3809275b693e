import Dispatch
import Foundation
import FrameKit
import Synchronization

/// The detector's command-line options, shared by `detect`, `profile` and `preview`.
struct DetectorSettings {
    static let detector = Option.choice(
        "detector", ["cnn", "haar"],
        help:
            "cnn (default): CenterFace (Models/centerface.onnx) run by XNNPACK, with confidences and landmarks; haar: OpenCV's Haar cascade."
    )
    static let model = Option.text(
        "model", "FILE",
        help:
            "The detector's model instead of the shipped one: cnn, an ONNX export of CenterFace (one 3-channel input; heatmap, box scale, offset and landmark outputs); haar, an OpenCV cascade XML. A file of another form, or one the reader refuses (an operator, attribute, IR version or operator set it does not read), exits 65 naming what does not fit."
    )
    static let mode = Option.choice(
        "mode", ["tracking", "full"],
        help:
            "tracking (the default for video, cameras and streams): full-frame passes every few frames, faces carried between them by correlation (docs/processors.md); full (the default for an image or a folder of images, each an unrelated picture, searched at its own resolution with --detector cnn, unless a tracking option is given): the detector on every frame."
    )
    static let scoreThreshold = Option.number(
        "score-threshold", "X", 0...1,
        help:
            "cnn: the lowest confidence of a face (default 0.3). In tracking mode a face three passes have reported is kept while the network scores it down to 0.05, and carries that lower confidence (docs/processors.md)."
    )
    static let inputSize = Option.integer(
        "input-size", "PIXELS", 64...2048,
        help:
            "cnn: the longest side of the network's input (default 640: a 720p frame runs at 640x384; larger finds smaller faces, at the square of the cost). Images in full mode are searched at their own resolution, in tiles of this size."
    )
    static let passInterval = Option.integer(
        "pass-interval", "N", 1...1000,
        help:
            "tracking, frames processed as fast as read: a full pass every N frames and on any frame where a face was lost (default 4; stretched while passes change nothing: --quiet-interval). Paced sources (cameras, --realtime) run passes on their own thread instead, back to back while they change something."
    )
    static let quietInterval = Option.integer(
        "quiet-interval", "N", 1...1000,
        help:
            "tracking: while passes change nothing (no new face, none missed or lost) and the camera looks still (the scene behind the faces, or where it cannot tell, the faces themselves), the frames from one pass to the next double, up to N, and any change brings passes back to their pace (every --pass-interval frames, or back to back for paced sources); a face appearing meanwhile waits up to N frames (default 12; 1: never stretched)."
    )
    static let cpuBudget = Option.number(
        "cpu-budget", "CORES", 0...1024,
        help:
            "tracking, paced sources (cameras, --realtime, streams): the most CPU the process may use, in cores' worth on average; detector passes are held back to stay under it, so new faces are found later (default: the CPUs this process may use, by its affinity mask and CPU quota, less half a CPU; 0: no limit). docs/processors.md"
    )
    static let tiles = Option.choice(
        "tiles", ["on", "off"],
        help:
            "tracking, cnn: on (default): passes over tiles of the frame take turns with whole-frame passes, for faces too small for the shrunk frame (from about 20 px at 720p); off: whole-frame passes only."
    )
    static let minFace = Option.integer(
        "min-face", "PIXELS", 0...100_000, help: "Smallest face side reported, in frame pixels (default: cnn none, haar height / 10).")
    static let maxFace = Option.integer(
        "max-face", "PIXELS", 0...100_000, help: "Largest face side reported (default: no limit); below --min-face is a usage error.")
    static let scaleFactor = Option.number("scale-factor", "X", 1.01...4, help: "haar: pyramid step (default 1.2).")
    static let minNeighbors = Option.integer("min-neighbors", "N", 0...100, help: "haar: detections a face needs (default 4).")
    static let detectionScale = Option.number(
        "detection-scale", "S", 0.01...1, help: "haar: detect on the frame shrunk by S (default: 480 / height, at most 1).")
    static let specs = [
        detector.spec, model.spec, mode.spec, scoreThreshold.spec, inputSize.spec, passInterval.spec, quietInterval.spec, cpuBudget.spec,
        tiles.spec,
        minFace.spec,
        maxFace.spec,
        scaleFactor.spec,
        minNeighbors.spec, detectionScale.spec
    ]

    enum Kind: String { case cnn, haar }
    enum Mode: String { case tracking, full }

    /// These settings with the mode decided for one source where `--mode` left it open: for
    /// `stills` (an image or a folder of images: `CaptureDevice.isStillImages`) each picture on
    /// its own (`full`: nothing is carried from one picture to the next, an unrelated one)
    /// unless a tracking option asks otherwise (``trackingAsked``), otherwise tracking.
    func forSource(stills: Bool) -> DetectorSettings {
        var resolved = self
        if resolved.mode == nil { resolved.mode = stills && !trackingAsked ? .full : .tracking }
        resolved.stills = stills
        return resolved
    }

    var kind = Kind.cnn
    /// `--model`: the model file instead of the shipped one.
    var modelFile: URL?
    /// Tracking, or the detector on every frame; nil (no --mode): by the source
    /// (``forSource(stills:)``).
    var mode: Mode?
    var tracking: Bool { mode != .full }
    /// A tracking option was given (--pass-interval, --quiet-interval, --tiles, --cpu-budget):
    /// with no --mode, images are tracked too, as asked.
    var trackingAsked = false
    var scoreThreshold = FaceDetector.Options().scoreThreshold
    var inputSize = FaceDetector.Options().inputSize
    /// The source's frames are still pictures (``forSource(stills:)``): in full mode, the CNN
    /// searches each at its own resolution (`FaceDetector.detectAtFullResolution(in:)`).
    var stills = false
    var fullResolution: Bool { stills && mode == .full && kind == .cnn }
    var passInterval = 4
    var quietInterval = FaceTracker.Options().quietInterval
    var tiles = true
    var minFace: Int?
    var maxFace: Int?
    var scaleFactor = 1.2
    var minNeighbors = 4
    var detectionScale: Double?
    /// Where background passes run: one for every source of a run (several --device/--input),
    /// so their networks take turns instead of fighting for the cores, under one CPU budget
    /// (`--cpu-budget`: its `cpuBudget`).
    var passScheduler: PassScheduler
    /// Whether a live source's first pass may run on its first frame
    /// (`FaceTracker.Options.firstPassOnFrameWithin`): not with several sources, whose first
    /// passes would all fall on the first frames at once (four paced sources on two cores: a
    /// late frame on every source, processing p99 36 ms, where none was late without it).
    var firstPassOnFrame = true

    /// The CPUs this process may use less half a CPU (at least half a CPU; `CPUAllowance`:
    /// its affinity mask or CPU quota): passes leave the rest to the frame path's neighbours on
    /// a shared machine.
    static var defaultCPUBudget: Double { max(0.5, CPUAllowance.current.cpus - 0.5) }

    init(_ options: ParsedOptions) throws {
        kind = options[Self.detector].flatMap(Kind.init(rawValue:)) ?? .cnn
        mode = options[Self.mode].flatMap(Mode.init(rawValue:))
        modelFile = options[Self.model].map { URL(fileURLWithPath: $0) }
        for spec in [Self.scoreThreshold.spec, Self.inputSize.spec] where kind != .cnn && options.has(spec) {
            throw UsageError("--\(spec.name) applies to --detector cnn")
        }
        for spec in [Self.scaleFactor.spec, Self.minNeighbors.spec, Self.detectionScale.spec] where kind != .haar && options.has(spec) {
            throw UsageError("--\(spec.name) applies to --detector haar")
        }
        let trackingOptions = [Self.passInterval.spec, Self.quietInterval.spec, Self.tiles.spec, Self.cpuBudget.spec]
        for spec in trackingOptions where mode == .full && options.has(spec) {
            throw UsageError("--\(spec.name) applies to --mode tracking")
        }
        trackingAsked = trackingOptions.contains { options.has($0) }
        let cores = options[Self.cpuBudget] ?? Self.defaultCPUBudget
        passScheduler = PassScheduler(lanes: 1, cpuBudget: cores > 0 ? cores : nil)
        tiles = options[Self.tiles] != "off"
        scoreThreshold = options[Self.scoreThreshold] ?? scoreThreshold
        inputSize = options[Self.inputSize] ?? inputSize
        passInterval = options[Self.passInterval] ?? passInterval
        quietInterval = options[Self.quietInterval] ?? quietInterval
        minFace = options[Self.minFace]
        maxFace = options[Self.maxFace]
        if let min = minFace, let max = maxFace, max > 0, max < min {
            throw UsageError("--max-face (\(max)) is below --min-face (\(min))")
        }
        scaleFactor = options[Self.scaleFactor] ?? scaleFactor
        minNeighbors = options[Self.minNeighbors] ?? minNeighbors
        detectionScale = options[Self.detectionScale]
    }

    /// What the summary says about the detector: its kind, model (name and the file found
    /// along ModelCatalog's search path) and mode.
    var summaryFields: [(String, JSON)] {
        let model = modelFile?.lastPathComponent ?? (kind == .cnn ? ModelCatalog.defaultFaceModel : ModelCatalog.haarFaceModel)
        return [
            ("detector", .string(kind.rawValue)), ("model", .string(model)),
            ("model_file", (modelFile ?? ModelCatalog.url(forModel: model)).map { .string($0.path) } ?? .null),
            ("mode", .string(tracking ? "tracking" : "full")),
            ("input_size", kind == .cnn ? .int(inputSize) : .null),
            ("full_resolution", .bool(fullResolution)),
            ("inference_threads", .number(Double(InferenceThreads.current), decimals: 0)),
            ("cpus", Self.cpusField(CPUAllowance.current))
        ]
    }

    /// The CPUs the process found it may use, and what set their number.
    static func cpusField(_ cpus: CPUAllowance) -> JSON {
        .object([
            ("count", .int(cpus.count)), ("from", .string(cpus.limit.rawValue)),
            ("affinity", .int(cpus.affinityCPUs)),
            ("quota", cpus.quota.map { .number($0, decimals: 2) } ?? .null)
        ])
    }

    /// The chain stage that finds faces, for frames `frameHeight` pixels high. `live`: frames
    /// come at the source's pace (a camera, `--realtime`), so passes run on their own thread.
    ///
    /// Only a live source's detector is prepared ahead (its networks set up by passes over blank
    /// frames, so that the first frame's passes are not late): a file read as fast as it goes
    /// waits for no frame, and its first frame's passes set the same networks up. Preparing
    /// it cost three passes nothing used: ~210 ms of one CPU at 720p, a third of a photo's run.
    func stage(frameWidth: Int, frameHeight: Int, live: Bool) throws -> any Processor {
        let detector = try self.detector(frameHeight: frameHeight)
        guard tracking else {
            if live {
                do { try detector.prepare(width: frameWidth, height: frameHeight) } catch { throw RuntimeFailure(error) }
            }
            return FaceDetectionProcessor(detector: detector, fullResolution: fullResolution)
        }
        do {
            var options = FaceTracker.Options(schedule: live ? .background : .inline(interval: passInterval))
            options.tiles = tiles
            options.quietInterval = quietInterval
            if !firstPassOnFrame { options.firstPassOnFrameWithin = nil }
            let tracker = try FaceTracker(detector: detector, options: options, scheduler: passScheduler)
            if live { try tracker.prepare(width: frameWidth, height: frameHeight) }
            return FaceTrackingProcessor(tracker: tracker)
        } catch { throw RuntimeFailure(error) }
    }

    func detector(frameHeight: Int) throws -> any FaceDetecting {
        do {
            switch kind {
            case .cnn:
                return try FaceDetector(
                    modelURL: modelFile,
                    options: .init(
                        inputSize: inputSize, scoreThreshold: scoreThreshold,
                        minFaceSize: minFace, maxFaceSize: maxFace))
            case .haar:
                return try HaarFaceDetector(
                    modelURL: modelFile,
                    options: .init(
                        scaleFactor: scaleFactor, minNeighbors: minNeighbors, minFaceSize: minFace ?? frameHeight / 10,
                        maxFaceSize: maxFace, detectionScale: detectionScale ?? min(1, 480 / Double(frameHeight))))
            }
        } catch { throw RuntimeFailure(error) }
    }
}

/// One detect run: a session on `device` at `preset`, the detector in the output's chain.
enum DetectPipeline {
    struct Limits {
        var frames: Int?
        /// Seconds: of wall-clock time for cameras and streams, of the media timeline for files
        /// (from the first frame read: the --start point).
        var duration: Double?
        /// Where a file is read from (`--start`): the part of its duration left, for the
        /// progress line's estimate.
        var start: Double = 0
        /// `--progress`: a progress line every few seconds, whatever stderr is.
        var progressLines = false

        /// The frames a run on `device` will see, delivered and dropped, where that is known:
        /// its media's duration (after `start`) at its frame rate, `frames`, and `duration` at
        /// the rate, whichever is fewest.
        func expectedFrames(on device: CaptureDevice) -> Int? {
            let rates = device.formats.flatMap(\.frameRates)
            // A camera runs at 30 where it can (the session's default), a file at its own rate.
            let rate = rates.contains(30) ? 30 : rates.max()
            var expected: [Int] = []
            if let rate, let media = device.duration { expected.append(Int((max(0, media - start) * rate).rounded())) }
            if let rate, let duration { expected.append(Int((duration * rate).rounded(.up))) }
            if let frames { expected.append(frames) }
            return expected.min()
        }
    }

    /// Seconds between `--progress` lines: a CI log gets a dozen lines a minute, not one per frame.
    static let progressLineSeconds = 5.0

    struct Result {
        var snapshot: StatsSnapshot
        var end: DetectRun.End
        /// What the summary says about the detector as this source ran it (its mode and input
        /// size follow the source where the options left them open).
        var detectorFields: [(String, JSON)]
        /// The annotated stream could not be written (it was removed, not left half-written).
        var annotationFailure: OutputFile.Failure?
    }

    static func run(
        device: CaptureDevice, preset: SessionPreset, settings: DetectorSettings, limits: Limits,
        printFrames: Bool, annotate: URL? = nil, source: String? = nil,
        sink: @escaping @Sendable (String) -> Bool = { Console.out($0) }, metrics: MetricsEndpoint? = nil,
        faces: (@Sendable (Int, [Rect]) -> Void)? = nil
    ) throws -> Result {
        let settings = settings.forSource(stills: device.isStillImages)
        let session: CaptureSession
        let output = VideoDataOutput()
        do {
            session = try DeviceChoice.session(device: device, preset: preset, output: output)
        } catch {
            throw RuntimeFailure(error)
        }
        let size = try DetectCommand.activeSize(device: device, preset: preset)
        let detection = try settings.stage(frameWidth: size.width, frameHeight: size.height, live: device.isPaced)
        // No pass runs past this call on any path: exit tears OpenCV's and XNNPACK's statics
        // down under a pass still running (FaceTracker.shutdown()).
        defer { (detection as? FaceTrackingProcessor)?.tracker.shutdown() }
        var stages: [any Processor] = [detection]
        let writer: MJPEGWriter?
        if let annotate {
            stages.append(AnnotationStage())
            writer = try MJPEGWriter(url: annotate)
        } else {
            writer = nil
        }
        output.processors = ProcessorChain(stages)
        // A file's --duration is on its own timeline: that many seconds of frames from the first
        // one read (the --start point), however fast they are read.
        let isFile = device.deviceType == .file
        let runner = DetectRun(
            frameLimit: limits.frames, mediaDuration: isFile ? limits.duration : nil, printFrames: printFrames,
            writer: writer, source: source, sink: sink, faces: faces)
        output.setSampleBufferDelegate(runner)
        session.addObserver { runner.notify($0) }
        let metricsName = source ?? DetectCommand.sourceName(device)
        var passes: (@Sendable () -> DetectionPasses)?
        if let tracker = (detection as? FaceTrackingProcessor)?.tracker { passes = { DetectionPasses(tracker.statistics) } }
        metrics?.add(MetricsSource(name: metricsName, stats: runner.stats, counts: { runner.counts }, passes: passes))
        defer { metrics?.remove(metricsName) }

        let interrupt = SignalWatch.onInterrupt { runner.finish(reason: .interrupted) }
        defer { interrupt.cancel() }
        do { try session.startRunning() } catch { throw RuntimeFailure(error) }
        let started = Date()
        let style: Progress.Style? =
            limits.progressLines ? .lines(every: Self.progressLineSeconds) : Console.stderrIsTerminal ? .terminal : nil
        let progress = style.map {
            Progress(
                counts: { runner.counts }, stats: runner.stats, expectedFrames: limits.expectedFrames(on: device), style: $0,
                source: source ?? DetectCommand.sourceName(device))
        }
        let lateWatch = (detection as? FaceTrackingProcessor).map { LatePassWatch(tracker: $0.tracker, source: source) }
        defer { lateWatch?.stop() }
        let end = runner.wait(until: isFile ? nil : limits.duration.map { started.addingTimeInterval($0) })
        let poolPeak = session.bufferUsage?.peakBytesInUse
        session.stopRunning()
        (detection as? FaceTrackingProcessor)?.tracker.shutdown() // its passes in the summary
        progress?.stop()
        var annotationFailure: OutputFile.Failure?
        do { try writer?.close() } catch let error as OutputFile.Failure { annotationFailure = error } catch {
            annotationFailure = OutputFile.Failure(path: annotate?.path ?? "", reason: "\(error)")
        }

        let active = session.inputs.first?.activeFormat?.size ?? FrameSize(width: size.width, height: size.height)
        var snapshot = runner.stats.snapshot(
            preset: presetLabel(preset, device: device, size: active), width: active.width, height: active.height,
            source: DetectCommand.sourceName(device), counts: runner.counts,
            poolPeakBytes: poolPeak)
        if let tracker = (detection as? FaceTrackingProcessor)?.tracker {
            snapshot.detectionPasses = DetectionPasses(tracker.statistics)
            warnIfLate(snapshot.detectionPasses!, source: source)
        }
        return Result(snapshot: snapshot, end: end, detectorFields: settings.summaryFields, annotationFailure: annotationFailure)
    }

    /// The preset a summary names. A file's or a stream's size is its own (the preset only
    /// chose among its one size): the preset naming that size (`hd1280x720`), else the size
    /// itself (`1280x544`), so runs group by what they processed. A camera's: the one asked for.
    static func presetLabel(_ preset: SessionPreset, device: CaptureDevice, size: FrameSize) -> String {
        guard device.hasFixedSize else { return preset.rawValue }
        let named = SessionPreset.allCases.first { $0.fixedSize.map { $0 == (size.width, size.height) } ?? false }
        return named?.rawValue ?? "\(size.width)x\(size.height)"
    }

    /// Passes slower than half a second's frames cannot keep up with the video: faces already
    /// found are still tracked, but a new face is reported that late. Said on stderr, not only
    /// in the summary's `detection_passes`.
    static func warnIfLate(_ passes: DetectionPasses, source: String?) {
        guard passes.resultAgeMaxFrames > lateResultFrames else { return }
        let name = source.map { "\($0): " } ?? ""
        Console.err(
            "framekit: \(name)face detection passes took \(Int(passes.latencyP50Milliseconds.rounded())) ms (p50), up to \(Int(passes.latencyMaxMilliseconds.rounded())) ms: new faces were reported up to \(passes.resultAgeMaxFrames) frames after they appeared (tracked faces were followed meanwhile). A smaller --input-size or a less busy machine shortens passes."
                + budgetNote(passes.budgetWaitSeconds)
        )
    }

    /// What the CPU budget added to a late pass's wait, for the late-pass lines ("" when nothing).
    static func budgetNote(_ seconds: Double) -> String {
        seconds >= 0.05
            ? " Passes also waited \(String(format: "%.1f", seconds)) s in all for the CPU budget (--cpu-budget): a larger one runs them sooner."
            : ""
    }

    /// Result age (frames) above which a run says its passes fell behind: half a second at 30 fps.
    static let lateResultFrames = 15
}

/// Says on stderr while a run goes on, not only at its end, when detection falls behind (checked
/// every 2 s; said once a run).
package final class LatePassWatch {
    private let timer: DispatchSourceTimer

    init(tracker: FaceTracker, source: String?) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "framekit.late-passes"))
        timer.schedule(deadline: .now() + 2, repeating: 2)
        let said = Atomic<Bool>(false)
        // The tracker held weakly: `cancel()` lets go of this handler only once the timer's
        // queue next runs, and a strong hold kept the tracker, its detector and their
        // networks (~150 MB at 1080p) alive that long after the run had ended (`framekit
        // profile` counted them in the next preset's peak memory, now and then even idle).
        timer.setEventHandler { [weak tracker] in
            guard let tracker, !said.load(ordering: .relaxed), let message = Self.message(for: tracker.statistics, source: source)
            else { return }
            said.store(true, ordering: .relaxed)
            Console.err(message)
        }
        timer.resume()
    }

    func stop() { timer.cancel() }

    /// What to say when the last 8 passes' faces were, by their median, more than
    /// ``DetectPipeline/lateResultFrames`` frames old when first reported; nil while they keep up.
    package static func message(for s: PassStatistics, source: String?) -> String? {
        let ages = s.recentAges.suffix(8).sorted()
        let latencies = s.recentLatencies.suffix(8).sorted()
        guard ages.count == 8, ages[4] > DetectPipeline.lateResultFrames else { return nil }
        return
            "framekit: \(source.map { "\($0): " } ?? "")face detection is falling behind: passes take \(Int((latencies[4] * 1000).rounded())) ms, so new faces are reported \(ages[4]) frames after they appear (tracked faces are still followed). A smaller --input-size or a less busy machine shortens passes."
            + DetectPipeline.budgetNote(s.budgetWaitSeconds)
    }
}

extension DetectionPasses {
    init(_ s: PassStatistics) {
        self.init(
            passes: s.passes, framesWithoutPass: s.framesWithoutPass, latencyP50Milliseconds: s.latency(quantile: 0.5) * 1000,
            latencyP99Milliseconds: s.latency(quantile: 0.99) * 1000, latencyMaxMilliseconds: s.maxLatency * 1000,
            resultAgeP50Frames: s.age(quantile: 0.5), resultAgeMaxFrames: s.maxAge, budgetWaitSeconds: s.budgetWaitSeconds,
            latencyTotalSeconds: s.totalLatency, resultAgeTotalFrames: s.totalAge)
    }
}

/// Appends JPEG frames to a file: an MJPEG stream that `framekit detect --input` and most
/// players read, complete or absent (a ``PartialFile`` that never replaces an existing file).
/// Appended to from the output's delegate queue and closed by the thread that ran the session,
/// once its stop has waited for that queue; the lock makes any other order safe too.
final class MJPEGWriter: Sendable {
    private let file: PartialFile
    private struct State {
        var encoder: JPEG.Encoder
        var frames = 0
    }
    private let state: Mutex<State>

    init(url: URL) throws {
        file = try PartialFile(path: url.path, replacing: false)
        state = Mutex(State(encoder: try JPEG.Encoder()))
    }

    func append(_ buffer: PixelBuffer) throws {
        guard file.failure == nil else { return }
        try state.withLock { s in
            if !file.append(try s.encoder.encode(buffer, quality: 85)) {
                throw OutputFile.Failure(path: file.path, reason: file.failure ?? "write failed", exitCode: ExitCode.ioError)
            }
            s.frames += 1
        }
    }

    /// Finishes the stream: it takes its name if every frame was written, else it is removed.
    /// With no frame at all (a signal before the first, an input with none) there is no file:
    /// an empty MJPEG is no stream, and stderr says so.
    func close() throws {
        guard state.withLock({ $0.frames }) > 0 else {
            file.abandon()
            Console.err("framekit: no frame was annotated: \(file.path) not written")
            return
        }
        try file.commit()
    }
}
