import Dispatch
import Foundation
import FrameKit
import Synchronization

/// `framekit detect`: faces in every delivered frame, as JSON lines, then a summary.
enum DetectCommand: Command {
    static let name = "detect"
    static let abstract = "Detect faces in live or recorded video; one JSON line per frame, then a summary."
    static let usage =
        "framekit detect [--preset NAME] [--device PATH|ID|virtual | --input FILE|DIR [--realtime]] [--frames N] [--duration S] [--stats FILE.json] ..."
    static let specs: [OptionSpec] =
        [
            OptionSpec(name: "preset", valueName: "NAME", help: "Session preset (default hd1280x720; for --input, the file's own size).")
        ] + DeviceChoice.specs + [
            OptionSpec(name: "frames", valueName: "N", help: "Stop after N frames have been captured (delivered or dropped)."),
            OptionSpec(name: "duration", valueName: "SECONDS", help: "Stop after this long."),
            OptionSpec(name: "stats", valueName: "FILE.json", help: "Write the full statistics as JSON."),
            OptionSpec(name: "report", valueName: "FILE.html", help: "Write an HTML report with latency plots."),
            OptionSpec(
                name: "annotate", valueName: "FILE.mjpeg",
                help: "Write every delivered frame, faces boxed, as MJPEG (refuses an existing file).")
        ] + DetectorSettings.specs

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "detect")
        let preset = try DeviceChoice.preset(options, default: options.string("input") == nil ? .hd1280x720 : .high)
        let limits = DetectPipeline.Limits(
            frames: try options.int("frames", range: 1...100_000_000),
            duration: try options.double("duration", range: 0.001...1e7))
        let settings = try DetectorSettings(options)
        let device = try DeviceChoice.resolve(options)
        let annotate = options.string("annotate").map { URL(fileURLWithPath: $0) }
        // Every output path is checked before capture starts, not found unwritable at the end.
        if let annotate { try OutputFile.check(annotate.path, replacing: false) }
        for name in ["stats", "report"] { if let path = options.string(name) { try OutputFile.check(path, replacing: true) } }
        let result = try DetectPipeline.run(
            device: device, preset: preset, settings: settings, limits: limits,
            printFrames: true, annotate: annotate)
        Console.out(SummaryJSON.summary(result.snapshot, detector: settings.summaryFields).text)
        if let path = options.string("stats") {
            try OutputFile.write(try SummaryJSON.encoded(result.snapshot), to: path, replacing: true)
        }
        if let path = options.string("report") {
            try OutputFile.write(StatsReport.html(for: [result.snapshot], title: "framekit detect"), to: path, replacing: true)
        }
        if let failure = result.annotationFailure { throw failure }
        if case .failed(let message) = result.end {
            Console.err("framekit: \(message)")
            return ExitCode.failure
        }
        return ExitCode.success
    }

    static func sourceName(_ device: CaptureDevice) -> String {
        switch device.deviceType {
        case .virtual: "virtual"
        case .file: device.uniqueID.replacingOccurrences(of: "file:", with: "")
        case .external: device.uniqueID
        }
    }

    /// The size the session will run at (for the detector's defaults), or a clear error.
    static func activeSize(device: CaptureDevice, preset: SessionPreset) throws -> (width: Int, height: Int) {
        if device.deviceType == .file { return (device.formats[0].size.width, device.formats[0].size.height) }
        guard let size = preset.resolve(among: device.supportedSizes) else {
            throw RuntimeFailure(
                "\(CaptureError.unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description)))"
            )
        }
        return (size.width, size.height)
    }
}

/// The delegate of one detect run: prints each result, feeds the stats, and ends the run.
final class DetectRun: VideoDataOutputSampleBufferDelegate {
    enum End: Sendable {
        case frames, duration, endOfInput, interrupted, outputClosed
        case failed(String)
    }

    let stats = StatsRecorder()
    private let frameLimit: Int?
    private let printFrames: Bool
    private let writer: MJPEGWriter?
    // What this run reported: frames printed and drops seen until it ended. The summary is
    // built from these, so it agrees with the lines printed (the output may count a frame or
    // two more that arrived while the session was stopping).
    private let state = Mutex<(seen: Int, end: End?, counts: OutputCounts)>((0, nil, OutputCounts()))
    private let ended = DispatchSemaphore(value: 0)

    init(frameLimit: Int?, printFrames: Bool = true, writer: MJPEGWriter? = nil) {
        self.frameLimit = frameLimit
        self.printFrames = printFrames
        self.writer = writer
    }

    func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        let delivered = Timestamp.now() // the processors have run: this is the result's moment
        guard count(nil) else { return }
        stats.recordResult(of: frame, resultAt: delivered)
        stats.sampleMemoryIfDue(frame.sequenceNumber)
        if let writer {
            // A failed write (a full disk) ends the run; the stream is removed at close, reported then.
            do { try writer.append(frame.pixelBuffer) } catch { finish(reason: .outputClosed) }
        }
        guard printFrames else { return }
        let latency = delivered.seconds(since: frame.captureInstant) * 1000
        let faces = JSON.array(
            frame.faces.map { f in
                .object([
                    ("x", .int(f.bounds.x)), ("y", .int(f.bounds.y)), ("width", .int(f.bounds.width)), ("height", .int(f.bounds.height)),
                    ("confidence", f.confidence.map { .number($0, decimals: 3) } ?? .null),
                    ("landmarks", .array(f.landmarks.map { .array([.number($0.x, decimals: 1), .number($0.y, decimals: 1)]) }))
                ])
            })
        let written = Console.out(
            JSON.object([
                ("frame", .int(Int(frame.sequenceNumber))), ("timestamp", .number(frame.presentationTime, decimals: 6)),
                ("width", .int(frame.pixelBuffer.width)), ("height", .int(frame.pixelBuffer.height)),
                ("faces", faces), ("latency_ms", .number(latency, decimals: 3))
            ]).text)
        // The reader went away (`| head`) or the disk is full: end the run; files still get written.
        if !written { finish(reason: .outputClosed) }
    }

    func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
        guard count(frame.reason) else { return }
        stats.recordDrop(frame)
    }

    /// Counts a captured frame; false once the run has ended (frames after the limit are
    /// still counted by the output but not printed).
    private func count(_ drop: DropReason?) -> Bool {
        let (accept, reached) = state.withLock { s -> (Bool, Bool) in
            guard s.end == nil else { return (false, false) }
            s.seen += 1
            s.counts.captured += 1
            if let drop { s.counts.dropped[drop, default: 0] += 1 } else { s.counts.delivered += 1 }
            return (true, frameLimit.map { s.seen >= $0 } ?? false)
        }
        if reached { finish(reason: .frames) }
        return accept
    }

    func notify(_ notification: SessionNotification) {
        switch notification {
        case .sourceEnded: finish(reason: .endOfInput)
        case .runtimeError(let error): finish(reason: .failed("\(error)"))
        case .wasInterrupted(let reason): finish(reason: .failed("capture interrupted: \(reason.rawValue)"))
        default: break
        }
    }

    func finish(reason: End) {
        let first = state.withLock { s -> Bool in
            guard s.end == nil else { return false }
            s.end = reason
            return true
        }
        if first { ended.signal() }
    }

    /// Frames captured, delivered and dropped as this run reported them.
    var counts: OutputCounts { state.withLock { $0.counts } }

    /// Blocks until the run ends (or `deadline` passes).
    func wait(until deadline: Date?) -> End {
        if let deadline {
            if ended.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow)) == .timedOut { finish(reason: .duration) }
        } else {
            ended.wait()
        }
        return state.withLock { $0.end ?? .duration }
    }
}

extension StatsRecorder {
    /// Memory is sampled every 30 frames: reading /proc costs ~20 µs.
    func sampleMemoryIfDue(_ sequence: UInt64) {
        if sequence % 30 == 0 { sampleMemory(poolBytesInUse: nil) }
    }
}

/// The live one-line progress on a terminal's stderr: results, fps, drops, latency.
final class Progress {
    private let timer: DispatchSourceTimer
    init(output: VideoDataOutput, stats: StatsRecorder) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "framekit.progress"))
        timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
        timer.setEventHandler {
            let c = output.counts
            let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: c)
            let line = String(
                format: "\r%6d delivered  %5.1f fps  %d dropped  latency p50 %.1f ms  p99 %.1f ms  ",
                c.delivered, s.fps, c.droppedTotal, s.latencyMilliseconds.p50, s.latencyMilliseconds.p99)
            Console.errRaw(line)
        }
        timer.resume()
    }
    func stop() {
        timer.cancel()
        Console.errRaw("\n")
    }
}

/// Ctrl-C (SIGINT) and SIGTERM (what Kubernetes, systemd and Slurm send) end a run cleanly:
/// the summary is printed, files are finished.
enum SignalWatch {
    final class Watch {
        let sources: [DispatchSourceSignal]
        init(_ sources: [DispatchSourceSignal]) { self.sources = sources }
        func cancel() { for s in sources { s.cancel() } }
    }

    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> Watch {
        let queue = DispatchQueue(label: "framekit.signals")
        return Watch(
            [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler(handler: handler)
                source.resume()
                return source
            })
    }
}
