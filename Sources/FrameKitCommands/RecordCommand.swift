import Dispatch
import Foundation
import FrameKit
import Synchronization

/// `framekit record`: Motion-JPEG AVI of the camera.
enum RecordCommand: Command {
    static let name = "record"
    static let stopsOnInterrupt = true
    static let abstract = "Record video: H.264 in MP4 or MOV, or Motion-JPEG in AVI (by the file's extension)."
    static let usage =
        "framekit record --output FILE.mp4|mov|avi [--frames N | --duration S] [--preset NAME] [--device PATH|ID|virtual] (without a limit: until Ctrl-C or SIGTERM)"
    static let output = Option.text(
        "output", "FILE.mp4|mov|avi",
        help:
            "Where to record (never overwritten). Required. .mp4/.mov: H.264, fragmented (a crash loses at most the last second); .avi: Motion-JPEG."
    )
    static let frames = Option.integer("frames", "N", 1...10_000_000, help: "Stop after N frames are written.")
    static let duration = Option.number("duration", "SECONDS", 0.01...86_400, help: "Stop after this much video.")
    static let preset = DeviceChoice.preset(help: "Session preset (default hd1280x720).")
    static let maxSize = Option.integer(
        "max-size", "BYTES", 1024...Int.max,
        help:
            "End the recording before the file exceeds this size (one no frame fits under — an empty .avi is 5.7 KB — records nothing: no file)."
    )
    static let specs = [
        output.spec, frames.spec, duration.spec, preset.spec, DeviceChoice.oneDevice.spec, ControlSettings.control.spec, maxSize.spec
    ]

    final class Finish: RecordingDelegate {
        let result = Mutex<(Int, CaptureError?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        func fileOutput(_ output: MovieFileOutput, didFinishRecordingTo url: URL, frames: Int, error: CaptureError?) {
            result.withLock { $0 = (frames, error) }
            done.signal()
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit record")
        guard let path = options[Self.output] else { throw UsageError("--output FILE.mp4|mov|avi is required") }
        let frames = options[Self.frames]
        let duration = options[Self.duration]
        // Neither: record until Ctrl-C or SIGTERM, which end the recording cleanly.
        guard frames == nil || duration == nil else { throw UsageError("give at most one of --frames N or --duration S") }
        guard ["mp4", "mov", "avi"].contains(URL(fileURLWithPath: path).pathExtension.lowercased()) else {
            throw UsageError("--output must end in .mp4 or .mov (H.264) or .avi (Motion-JPEG), got \(path)")
        }
        let maxSize = options[Self.maxSize]
        let preset = options[Self.preset] ?? .hd1280x720
        let url = URL(fileURLWithPath: path)
        try OutputFile.check(url.path, replacing: false)
        let device = try DeviceChoice.resolve(options)
        let session: CaptureSession
        let output = MovieFileOutput()
        output.maxRecordedDuration = duration
        output.maxRecordedFileSize = maxSize
        output.maxRecordedFrameCount = frames
        let finish = Finish()
        do { session = try DeviceChoice.session(device: device, preset: preset, output: output) } catch {
            throw RuntimeFailure(error)
        }
        do {
            try session.startRunning()
            try output.startRecording(to: url, recordingDelegate: finish)
        } catch {
            session.stopRunning()
            throw RuntimeFailure(error)
        }
        let interrupt = SignalWatch.onInterrupt { output.stopRecording() }
        defer { interrupt.cancel() }
        // The recording ends by its limit (frames, duration, size), a signal, or a failure: each
        // finishes it, which signals `done`.
        finish.done.wait()
        session.stopRunning()
        let (written, error) = finish.result.withLock { $0! }
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
        let counts = output.counts
        // A limit ending the recording is what --duration/--max-size asked for, not a failure.
        let failed: Bool
        switch error {
        case nil, .maximumDurationReached?, .maximumFileSizeReached?, .maximumFrameCountReached?: failed = false
        default: failed = true
        }
        // Stopped before the first frame (a signal at once): no file was made (an empty
        // recording is none), and the summary does not name one.
        let exists = FileManager.default.fileExists(atPath: url.path)
        if !exists { Console.err("framekit: no frame was recorded: \(url.path) not written") }
        Console.out(
            JSON.object([
                ("recording", exists ? .string(url.path) : .null), ("frames", .int(written)), ("bytes", .int(size)),
                ("frames_dropped", .int(counts.droppedTotal)),
                ("ended_by", .string(error.map { "\($0)" } ?? "stop"))
            ]).text)
        if failed {
            Console.err("framekit: \(error!)")
            // A write that failed (a full disk) is EX_IOERR, as for every other file the CLI writes.
            if case .cannotWrite? = error { return ExitCode.ioError }
            return ExitCode.failure
        }
        return ExitCode.success
    }
}
