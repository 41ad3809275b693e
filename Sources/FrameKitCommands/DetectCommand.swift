import Dispatch
import Foundation
import FrameKit
import Synchronization

/// `framekit detect`: faces in every delivered frame, as JSON lines, then a summary.
enum DetectCommand: Command {
    static let name = "detect"
    static let stopsOnInterrupt = true
    static let abstract = "Detect faces in live or recorded video; one JSON line per frame, then a summary."
    static let usage =
        "framekit detect [--preset NAME] [--device PATH|ID|virtual | --input FILE|DIR [--realtime]] [--frames N] [--duration S] [--stats FILE.json] ..."
    static let preset = DeviceChoice.preset(help: "Session preset (default hd1280x720; for --input, the file's own size).")
    static let frames = Option.integer(
        "frames", "N", 1...100_000_000, help: "Stop after N frames have been captured (delivered or dropped).")
    static let duration = Option.number(
        "duration", "SECONDS", 0.001...1e7,
        help: "Stop after this long: for --input files, this much of the media timeline (from --start), however fast it is read.")
    static let stats = Option.text(
        "stats", "FILE.json", help: "Write the full statistics as JSON (percentiles, histogram, per-frame timeline).")
    static let report = Option.text("report", "FILE.html", help: "Write an HTML report with latency plots (docs/stats.md).")
    static let progress = Flag(
        "progress",
        help:
            "Print a progress line to stderr every 5 s, even when stderr is not a terminal (CI logs): frames, and for an input of known length (a video file, a folder, --frames, --duration) the share done and the time left."
    )
    static let annotate = Option.text(
        "annotate", "FILE.mjpeg",
        help:
            "Write every delivered frame, faces boxed, as an MJPEG stream that detect --input reads back (at 30 fps: MJPEG carries no frame rate; refuses an existing file; a name not ending .mjpeg or .mjpg is a usage error)."
    )
    static let specs =
        [preset.spec] + DeviceChoice.specs + [frames.spec, duration.spec, stats.spec, report.spec, annotate.spec, progress.spec]
        + BatchRun.specs + [MetricsEndpoint.option.spec] + DetectorSettings.specs

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit detect")
        // The bytes are MJPEG whatever the name: an .mp4 of them would be a file no player reads.
        if let path = options[annotate], !["mjpeg", "mjpg"].contains(URL(fileURLWithPath: path).pathExtension.lowercased()) {
            throw UsageError("--annotate writes an MJPEG stream: name it .mjpeg or .mjpg (got \(path))")
        }
        // Two outputs of one file would leave only the later one.
        let outputs = [("annotate", options[annotate]), ("stats", options[stats]), ("report", options[report])].compactMap { name, path in
            path.map { (name, URL(fileURLWithPath: $0).standardizedFileURL.resolvingSymlinksInPath().path) }
        }
        for (i, a) in outputs.enumerated() {
            if let b = outputs[(i + 1)...].first(where: { $0.1 == a.1 }) {
                throw UsageError("--\(a.0) and --\(b.0) name the same file \(a.1)")
            }
        }
        let preset = options[preset] ?? (options[DeviceChoice.input] == nil ? .hd1280x720 : .high)
        let limits = DetectPipeline.Limits(
            frames: options[frames], duration: options[duration], start: options[DeviceChoice.start] ?? 0,
            progressLines: options[progress])
        var settings = try DetectorSettings(options)
        let metrics = try MetricsEndpoint.start(options)
        defer { metrics?.stop() }
        if options.has(BatchRun.inputs.spec) || options.has(BatchRun.outputDir.spec) {
            return try BatchRun.run(options, preset: options[Self.preset] ?? .high, settings: settings, limits: limits, metrics: metrics)
        }
        for spec in [BatchRun.shard.spec, BatchRun.shardCount.spec] where options.has(spec) {
            throw UsageError("--\(spec.name) applies to a batch (--inputs)")
        }
        let devices = try DeviceChoice.resolveAll(options)
        // Several sources: their passes take turns, two at once, each on one thread (two
        // passes of a thread per core each outnumbered the cores and made frames late; four
        // lanes ran no more passes than two): eight cameras do not run eight networks
        // (docs/performance.md).
        if devices.count > 1 {
            settings.passScheduler = PassScheduler(lanes: 2, cpuBudget: settings.passScheduler.cpuBudget)
            settings.firstPassOnFrame = false
        }
        // A live source's passes run beside its frame path, on one thread each: two found no
        // more faces (report crowd-sweep, cuts, crowd, paced, idle and beside two busy loops,
        // within a round's spread; docs/performance.md) and one leaves the other CPU to the
        // frame path. A file read as fast as it goes keeps a thread per CPU it may use: its
        // passes are on the frame path.
        if devices.count > 1 || devices.contains(where: \.isPaced) { InferenceThreads.set(1) }
        let annotate = options[annotate].map { URL(fileURLWithPath: $0) }
        if devices.count > 1 && annotate != nil { throw UsageError("--annotate takes one source; give one --device or --input") }
        // Every output path is checked before capture starts, not found unwritable at the end.
        let inputs = options.all(DeviceChoice.input)
        if let annotate { try OutputFile.check(annotate.path, replacing: false, inputs: inputs) }
        for option in [stats, report] { if let path = options[option] { try OutputFile.check(path, replacing: true, inputs: inputs) } }
        let results: [Result<DetectPipeline.Result, any Error>]
        if devices.count == 1 {
            results = [
                Result {
                    try DetectPipeline.run(
                        device: devices[0], preset: preset, settings: settings, limits: limits, printFrames: true, annotate: annotate,
                        metrics: metrics)
                }
            ]
        } else {
            results = runConcurrently(devices, preset: preset, settings: settings, limits: limits, metrics: metrics)
        }
        // One summary per source, in the order the devices were given.
        for result in results {
            guard case .success(let r) = result else { continue }
            Console.out(JSON.object([("summary", .object(StatsJSON.summaryFields(r.snapshot) + r.detectorFields))]).text)
        }
        if devices.count == 1, case .failure(let error) = results[0] { throw error }
        let snapshots = results.compactMap { try? $0.get().snapshot }
        if let path = options[stats] {
            let document =
                devices.count == 1
                ? StatsJSON.document(snapshots[0]) : JSON.object([("sources", .array(snapshots.map(StatsJSON.document)))])
            try OutputFile.write(document.text + "\n", to: path, replacing: true)
        }
        if let path = options[report] {
            try OutputFile.write(StatsReport.html(for: snapshots, title: "framekit detect"), to: path, replacing: true)
        }
        var code = ExitCode.success
        let startHint = options[DeviceChoice.start].map { " from --start \($0) s on" } ?? ""
        for (device, result) in zip(devices, results) {
            switch result {
            case .failure(let error):
                let failure = error as? RuntimeFailure ?? RuntimeFailure(error)
                Console.err("framekit: \(sourceName(device)): \(failure.description)")
                if code == ExitCode.success { code = (error as? UsageError) != nil ? ExitCode.usage : failure.exitCode }
            case .success(let r):
                if let failure = r.annotationFailure { throw failure }
                if case .failed(let message, let exit) = r.end {
                    Console.err("framekit: \(devices.count > 1 ? "\(sourceName(device)): " : "")\(message)")
                    if code == ExitCode.success { code = exit }
                } else if device.deviceType == .file, r.snapshot.framesCaptured == 0, case .endOfInput = r.end {
                    // A file that ended before any frame (a header only, --start past its end)
                    // is bad input, not a run that found no face.
                    Console.err("framekit: \(sourceName(device)): no frame in it\(startHint)")
                    if code == ExitCode.success { code = ExitCode.dataError }
                } else if device.deviceType == .file, r.snapshot.framesCaptured > 0,
                    r.snapshot.drops[DropReason.corrupt.rawValue] == r.snapshot.framesCaptured, case .endOfInput = r.end
                {
                    // Every frame damaged (a broken image, a file of garbage after a valid
                    // header): counted as corrupt drops, and nothing readable is bad input too.
                    Console.err("framekit: \(sourceName(device)): no readable frame in it (\(r.snapshot.framesCaptured) damaged)")
                    if code == ExitCode.success { code = ExitCode.dataError }
                } else if device.deviceType == .file, let corrupt = r.snapshot.drops[DropReason.corrupt.rawValue], corrupt > 0,
                    isFolder(sourceName(device))
                {
                    // A damaged image is a corrupt drop, which the summary counts and a user
                    // reading only stderr would never learn of.
                    Console.err(
                        "framekit: \(sourceName(device)): \(corrupt) of its \(r.snapshot.framesCaptured) images dropped as corrupt (damaged, or not an image FrameKit reads)"
                    )
                }
            }
        }
        return code
    }

    /// Several cameras at once: one detect pipeline (session, capture thread, detector) per
    /// camera, their frame lines tagged with the source; a camera that fails does not stop the others.
    private static func runConcurrently(
        _ devices: [CaptureDevice], preset: SessionPreset, settings: DetectorSettings, limits: DetectPipeline.Limits,
        metrics: MetricsEndpoint?
    ) -> [Result<DetectPipeline.Result, any Error>] {
        let results = Mutex([Result<DetectPipeline.Result, any Error>?](repeating: nil, count: devices.count))
        let group = DispatchGroup()
        for (index, device) in devices.enumerated() {
            group.enter()
            let thread = Thread {
                let result = Result {
                    try DetectPipeline.run(
                        device: device, preset: preset, settings: settings, limits: limits, printFrames: true,
                        source: sourceName(device), metrics: metrics)
                }
                results.withLock { $0[index] = result }
                group.leave()
            }
            thread.name = "framekit.detect.\(index)"
            thread.start()
        }
        group.wait()
        return results.withLock { $0.map { $0! } }
    }

    /// Whether `path` is a folder (a folder of images given to --input).
    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    static func sourceName(_ device: CaptureDevice) -> String {
        switch device.deviceType {
        case .virtual: device.uniqueID
        case .file: device.uniqueID.replacingOccurrences(of: "file:", with: "")
        case .external, .stream: device.uniqueID
        }
    }

    /// The size the session will run at (for the detector's defaults), or a clear error.
    static func activeSize(device: CaptureDevice, preset: SessionPreset) throws -> (width: Int, height: Int) {
        if device.hasFixedSize { return (device.formats[0].size.width, device.formats[0].size.height) }
        guard let size = preset.resolve(among: device.supportedSizes) else {
            throw RuntimeFailure(
                "\(CaptureError.unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description)))"
            )
        }
        return (size.width, size.height)
    }
}
