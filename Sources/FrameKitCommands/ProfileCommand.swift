import Foundation
import FrameKit

/// `framekit profile`: the detect pipeline at several presets, one after the other.
enum ProfileCommand: Command {
    static let name = "profile"
    static let stopsOnInterrupt = true
    static let abstract = "Run the detect pipeline at several presets and report drops, latency and memory for each."
    static let usage = "framekit profile --presets a,b,c --duration S [--device PATH|ID|virtual] [--json FILE] [--report FILE.html]"
    static let presets = Option.text(
        "presets", "a,b,c", help: "Presets to run, comma-separated (default vga640x480,hd1280x720,hd1920x1080).")
    static let duration = Option.number("duration", "SECONDS", 0.1...86_400, help: "How long to run each preset (default 5).")
    static let json = Option.text("json", "FILE", help: "Also write the JSON to this file.")
    static let report = Option.text("report", "FILE.html", help: "Write an HTML report comparing the presets.")
    static let specs = [presets.spec, duration.spec, DeviceChoice.oneDevice.spec, json.spec, report.spec] + DetectorSettings.specs

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit profile")
        let names = (options[presets] ?? "vga640x480,hd1280x720,hd1920x1080").split(separator: ",", omittingEmptySubsequences: false)
            .map(String.init)
        guard names != [""] else { throw UsageError("--presets needs at least one preset") }
        guard !names.contains("") else { throw UsageError("--presets '\(options[presets] ?? "")' has an empty entry") }
        let presets = try names.map { name in
            guard let preset = SessionPreset(named: name) else {
                throw UsageError(
                    "unknown preset '\(name)'; valid presets: \(SessionPreset.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return preset
        }
        let duration = options[Self.duration] ?? 5
        let settings = try DetectorSettings(options)
        for option in [Self.json, Self.report] { if let path = options[option] { try OutputFile.check(path, replacing: true) } }
        let device = try DeviceChoice.resolve(options)
        for preset in presets where !device.supportsSessionPreset(preset) {
            throw RuntimeFailure(
                "\(CaptureError.unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description)))"
            )
        }
        var snapshots: [StatsSnapshot] = []
        var detectorFields: [(String, JSON)] = []
        var failure: (message: String, code: Int32)?
        for preset in presets {
            // Each preset's rss_peak_mb is its own run's, not the process's so far (4K's peak was
            // reported for the CIF run after it).
            MemoryProbe.startNewPeak()
            // Named by its preset: stderr's lines about late passes say which run they are about.
            let result = try DetectPipeline.run(
                device: device, preset: preset, settings: settings,
                limits: .init(frames: nil, duration: duration), printFrames: false, source: preset.rawValue)
            snapshots.append(result.snapshot)
            detectorFields = result.detectorFields
            if case .failed(let message, let code) = result.end {
                failure = (message, code)
                break
            }
            if case .interrupted = result.end { break }
        }
        let json = JSON.object([("presets", .array(snapshots.map { .object(StatsJSON.summaryFields($0) + detectorFields) }))]).text
        Console.out(json)
        if let path = options[Self.json] { try OutputFile.write(json + "\n", to: path, replacing: true) }
        if let path = options[report] {
            try OutputFile.write(StatsReport.html(for: snapshots, title: "framekit profile"), to: path, replacing: true)
        }
        if let failure {
            Console.err("framekit: \(failure.message)")
            return failure.code
        }
        return ExitCode.success
    }
}
