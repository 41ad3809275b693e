import Foundation
import FrameKit

/// Turns `--device` / `--input` into a capture device, as every capturing command does.
enum DeviceChoice {
    /// `--device`, shared by every command that captures.
    static let deviceSpec = OptionSpec(
        name: "device", valueName: "PATH|ID|virtual",
        help: "Camera to use (default: the first V4L2 camera, else the virtual camera).")

    static let specs: [OptionSpec] = [
        deviceSpec,
        OptionSpec(name: "input", valueName: "FILE|DIR", help: "Read frames from a Y4M, MJPEG, JPEG/PGM/PPM file or a folder of images."),
        OptionSpec(name: "realtime", valueName: nil, help: "Pace --input at its frame rate, dropping late frames like a camera.")
    ]

    static func resolve(_ options: ParsedOptions) throws -> CaptureDevice {
        if options.string("device") != nil && options.string("input") != nil {
            throw UsageError("--device and --input cannot be used together")
        }
        if options.flag("realtime") && options.string("input") == nil {
            throw UsageError("--realtime applies to --input only")
        }
        if let input = options.string("input") {
            do { return try CaptureDevice.file(URL(fileURLWithPath: input), realTime: options.flag("realtime")) } catch {
                throw RuntimeFailure("\(error)")
            }
        }
        switch options.string("device") {
        case "virtual":
            return CaptureDevice.virtualCamera
        case let id?:
            let path = id.hasPrefix("/") ? id : (Int(id).map { "/dev/video\($0)" } ?? id)
            do { return try CaptureDevice.v4l2(path: path) } catch { throw RuntimeFailure("\(error)") }
        case nil:
            let discovery = DiscoverySession(deviceTypes: [.external])
            if let camera = discovery.devices.first { return camera }
            let denied = discovery.problems.contains { if case .permissionDenied = $0.error { true } else { false } }
            Console.err(
                denied
                    ? "framekit: \(CaptureDevice.authorizationAdvice); using the virtual camera"
                    : "framekit: no camera found; using the built-in virtual camera")
            return CaptureDevice.virtualCamera
        }
    }

    static func preset(_ options: ParsedOptions, default fallback: SessionPreset) throws -> SessionPreset {
        guard let name = options.string("preset") else { return fallback }
        guard let preset = SessionPreset(named: name) else {
            throw UsageError("unknown preset '\(name)'; valid presets: \(SessionPreset.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return preset
    }

    /// A session with `device` as its input at `preset`, feeding `output` (not yet running).
    static func session(device: CaptureDevice, preset: SessionPreset, output: any CaptureOutput) throws -> CaptureSession {
        let session = CaptureSession()
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: device))
            try session.setSessionPreset(preset)
            try session.addOutput(output)
        }
        return session
    }
}
