import Dispatch
import Foundation
import FrameKit

/// The detector's command-line options, shared by `detect` and `profile`.
struct DetectorSettings {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "scale-factor", valueName: "X", help: "Detector pyramid step, > 1 (default 1.2)."),
        OptionSpec(name: "min-neighbors", valueName: "N", help: "Detections a face needs (default 4)."),
        OptionSpec(name: "min-face", valueName: "PIXELS", help: "Smallest face size in frame pixels (default: height / 10)."),
        OptionSpec(name: "max-face", valueName: "PIXELS", help: "Largest face size in frame pixels (default: no limit)."),
        OptionSpec(name: "detection-scale", valueName: "S", help: "Full mode: detect on the frame shrunk by S, 0 < S <= 1 (default: 480 / height, at most 1)."),
        OptionSpec(name: "mode", valueName: "tracking|full", help: "tracking (default): real-time search near known faces plus periodic low-resolution scans; full: detectMultiScale on every frame."),
    ]

    var scaleFactor = 1.2
    var minNeighbors = 4
    var minFace: Int?
    var maxFace: Int?
    var detectionScale: Double?
    var tracking = true

    init(_ options: ParsedOptions) throws {
        scaleFactor = try options.double("scale-factor", range: 1.01...4) ?? 1.2
        minNeighbors = try options.int("min-neighbors", range: 0...100) ?? 4
        minFace = try options.int("min-face", range: 0...100_000)
        maxFace = try options.int("max-face", range: 0...100_000)
        detectionScale = try options.double("detection-scale", range: 0.01...1)
        switch options.string("mode") {
        case nil, "tracking": tracking = true
        case "full": tracking = false
        case let other?: throw UsageError("--mode must be tracking or full, got '\(other)'")
        }
    }

    /// The chain stage that finds faces, for frames `frameHeight` pixels high.
    func stage(frameHeight: Int) throws -> any Processor {
        guard tracking else { return FaceDetectionProcessor(detector: try detector(frameHeight: frameHeight)) }
        var options = FaceTracker.Options()
        options.minFaceFraction = Double(minFace ?? frameHeight / 10) / Double(frameHeight)
        options.scanNeighbors = minNeighbors
        do {
            return FaceTrackingProcessor(tracker: FaceTracker(detector: try FaceDetector(options: .init(scaleFactor: scaleFactor)), options: options))
        } catch { throw RuntimeFailure("\(error)") }
    }

    func detector(frameHeight: Int) throws -> FaceDetector {
        do {
            return try FaceDetector(options: .init(
                scaleFactor: scaleFactor, minNeighbors: minNeighbors, minFaceSize: minFace ?? frameHeight / 10,
                maxFaceSize: maxFace, detectionScale: detectionScale ?? min(1, 480 / Double(frameHeight))))
        } catch { throw RuntimeFailure("\(error)") }
    }
}

/// One detect run: a session on `device` at `preset`, the detector in the output's chain.
enum DetectPipeline {
    struct Limits {
        var frames: Int?
        var duration: Double?
    }

    struct Result {
        var snapshot: StatsSnapshot
        var end: DetectRun.End
    }

    static func run(device: CaptureDevice, preset: SessionPreset, settings: DetectorSettings, limits: Limits,
                    printFrames: Bool, annotate: URL? = nil) throws -> Result {
        let session: CaptureSession
        let output = VideoDataOutput()
        do {
            session = try DeviceChoice.session(device: device, preset: preset, output: output)
        } catch {
            throw RuntimeFailure("\(error)")
        }
        let size = try DetectCommand.activeSize(device: device, preset: preset)
        var stages: [any Processor] = [try settings.stage(frameHeight: size.height)]
        let writer: MJPEGWriter?
        if let annotate {
            stages.append(AnnotationStage())
            do { writer = try MJPEGWriter(url: annotate) } catch { throw RuntimeFailure("cannot create \(annotate.path): \(error)") }
        } else {
            writer = nil
        }
        output.processors = ProcessorChain(stages)
        let runner = DetectRun(frameLimit: limits.frames, printFrames: printFrames, writer: writer)
        output.setSampleBufferDelegate(runner)
        session.addObserver { runner.notify($0) }

        let interrupt = SignalWatch.onInterrupt { runner.finish(reason: .interrupted) }
        defer { interrupt.cancel() }
        do { try session.startRunning() } catch { throw RuntimeFailure("\(error)") }
        let started = Date()
        let progress = Console.stderrIsTerminal ? Progress(output: output, stats: runner.stats) : nil
        let end = runner.wait(until: limits.duration.map { started.addingTimeInterval($0) })
        let poolPeak = session.bufferUsage?.peakBytesInUse
        session.stopRunning()
        progress?.stop()
        writer?.close()

        let active = session.inputs.first?.activeFormat?.size ?? FrameSize(width: size.width, height: size.height)
        let snapshot = runner.stats.snapshot(preset: preset.rawValue, width: active.width, height: active.height,
                                              source: DetectCommand.sourceName(device), counts: runner.counts,
                                              poolPeakBytes: poolPeak)
        return Result(snapshot: snapshot, end: end)
    }
}

/// Appends JPEG frames to a file: an MJPEG stream that `framekit detect --input` and most
/// players read.
final class MJPEGWriter: @unchecked Sendable {
    // @unchecked: used only from the output's serial delegate queue, then closed by the main
    // thread after the session has stopped (the queue is idle by then).
    private let handle: FileHandle
    private let encoder: JPEG.Encoder

    init(url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteNoPermission)
        }
        handle = try FileHandle(forWritingTo: url)
        encoder = try JPEG.Encoder()
    }

    func append(_ buffer: PixelBuffer) throws {
        try handle.write(contentsOf: Data(encoder.encode(buffer, quality: 85)))
    }

    func close() { try? handle.close() }
}
