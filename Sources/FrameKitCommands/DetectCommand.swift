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
