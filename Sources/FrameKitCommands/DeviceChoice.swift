import Foundation
import FrameKit

/// Turns `--device` / `--input` into a capture device, as every capturing command does.
enum DeviceChoice {
    /// What `--device` names, for every command that captures.
    private static let deviceHelp =
        "A V4L2 node (/dev/video0, or 0) or the virtual camera (virtual; virtual:2, virtual:3… are more of them); default: the first V4L2 camera, else the virtual camera."
    /// `detect`'s `--device`, which may be given several times.
    static let device = Option.repeatable(
        "device", "PATH|ID|virtual",
        help: deviceHelp + " Several (--device A --device B): each camera on its own thread, lines tagged with their source.")
    /// `--device` for the commands that take one camera (photo, record, profile): the same option
    /// (one name, parsed alike), with help that does not offer several.
    static let oneDevice = Option.repeatable("device", "PATH|ID|virtual", help: deviceHelp)
    static let input = Option.repeatable(
        "input", "FILE|DIR|URL",
        help:
            "Read frames from a video file (MP4, MKV, WebM, MOV, AVI: H.264, H.265, VP9, AV1…; Y4M, MJPEG), JPEG/PNG/PGM/PPM images or a folder of them (each image a frame of its own size) — every frame is processed — or a live stream (rtsp://, tcp://, udp://, http(s)://, srt://), read in real time and reconnected when it drops. An http(s):// URL to a recording (one with a duration, or a response with a length) is read as a file: it ends; so does an http(s) or tcp stream that ends and, reopened, begins again with its first frame (a recording served again; a still picture served live is not judged so). framekit connects, never listens (?listen=1, srt mode=listener: a usage error). Several (--input A --input B: a fleet of streams): each on its own thread, like several --device. A folder of video files, one after another: --inputs DIR --output-dir D."
    )
    static let realtime = Flag("realtime", help: "Pace --input at its frame rate, dropping late frames like a camera.")
    static let start = Option.number(
        "start", "SECONDS", 0...1e7,
        help: "With --input, a video file: start this far into it (from the key frame before, frames up to it skipped).")

    static let reconnect = Option.integer(
        "reconnect", "N", 0...1000,
        help:
            "With --input, a live stream: reconnection attempts when it drops (default 5, from 0.5 s doubling to 8 s; they start over once a connection gives a frame); 0: end at once (exit 75)."
    )

    /// `--device`, `--input`, `--realtime`…: where a command that can read files takes frames from.
    static let specs = [device.spec, input.spec, realtime.spec, start.spec, reconnect.spec, ControlSettings.control.spec]

    /// The device the options name, with their `--control` settings applied.
    static func resolve(_ options: ParsedOptions) throws -> CaptureDevice {
        guard options.all(device).count <= 1 else { throw UsageError("--device is given more than once; only detect takes several") }
        guard options.all(input).count <= 1 else { throw UsageError("--input is given more than once; only detect takes several") }
        try ControlSettings.validate(options)
        let device = try choose(options)
        try ControlSettings.apply(options, to: device)
        return device
    }

    /// Every `--device` given (detect's several cameras), each with the `--control` settings
    /// applied; one device as ``resolve(_:)`` chooses it otherwise.
    static func resolveAll(_ options: ParsedOptions) throws -> [CaptureDevice] {
        if options.all(input).count > 1 {
            try ControlSettings.validate(options)
            guard options.all(ControlSettings.control).isEmpty else { throw UsageError("--control applies to cameras (--device)") }
            try checkCombinations(options)
            return try openInputs(options)
        }
        let ids = options.all(device)
        guard ids.count > 1 else { return [try resolve(options)] }
        guard options[input] == nil else { throw UsageError("--device and --input cannot be used together") }
        guard Set(ids.map(nodePath)).count == ids.count else { throw UsageError("the same --device is given twice") }
        try ControlSettings.validate(options)
        return try ids.map { id in
            let device = try open(id)
            try ControlSettings.apply(options, to: device)
            return device
        }
    }

    /// The stream protocols `--input` takes (docs/capture.md): those FFmpeg reads live.
    static let streamSchemes = ["rtsp", "rtsps", "tcp", "udp", "http", "https", "srt"]

    /// An input as `--input` and a batch list's line take it: a URL with one of
    /// ``streamSchemes`` (or file://), anything else a path. Else a ``UsageError`` naming `what`.
    static func inputURL(_ input: String, what: String) throws -> URL {
        guard let url = input.contains("://") ? URL(string: input) : URL(fileURLWithPath: input) else {
            throw UsageError("\(what) '\(redactingCredentials(input))' is not a valid URL")
        }
        if !url.isFileURL, !streamSchemes.contains(url.scheme?.lowercased() ?? "") {
            throw UsageError(
                "\(what) '\(redactingCredentials(input))': streams are \(streamSchemes.map { $0 + "://" }.joined(separator: ", ")) (or a file's path)"
            )
        }
        if !url.isFileURL, isListening(url) {
            throw UsageError(
                "\(what) '\(redactingCredentials(input))' would make framekit a server waiting for whoever connects (listen/listener): "
                    + "it reads streams as a client; have the sender listen, and give framekit its address")
        }
        return url
    }

    /// Whether a stream URL asks libavformat to listen rather than connect: `listen=1` (or 2)
    /// for tcp, udp, http and rtsp, `mode=listener` for srt. Such an input accepts a stream
    /// from anyone who reaches the port — and in a batch, waits for ever.
    static func isListening(_ url: URL) -> Bool {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.contains { item in
            let name = item.name.lowercased()
            let value = (item.value ?? "1").lowercased()
            return (name == "listen" && value != "0") || (name == "mode" && value == "listener")
        }
    }

    /// The device for an input URL: a stream (reconnected as `--reconnect` says), or a file
    /// (file:// included: it is checked like a path — a FIFO or a device node is refused).
    static func openInput(_ url: URL, options: ParsedOptions, start: Double) throws(CaptureError) -> CaptureDevice {
        if !url.isFileURL { return try CaptureDevice.stream(url, reconnect: .init(attempts: options[reconnect] ?? 5)) }
        return try CaptureDevice.file(url, realTime: options[realtime], start: start)
    }

    /// A `--device` value as a node path (`0` → /dev/video0).
    private static func nodePath(_ id: String) -> String {
        id == "virtual" || id.hasPrefix("/") ? id : (Int(id).map { "/dev/video\($0)" } ?? id)
    }

    private static func open(_ id: String) throws -> CaptureDevice {
        if id == "virtual" { return CaptureDevice.virtualCamera }
        if id.hasPrefix("virtual:") {
            guard let n = Int(id.dropFirst("virtual:".count)), n > 0 else {
                throw UsageError("--device '\(id)': the virtual cameras are virtual, virtual:2, virtual:3…")
            }
            return CaptureDevice.makeVirtualCamera(uniqueID: id, name: "FrameKit Virtual Camera \(n)")
        }
        guard !id.isEmpty else { throw UsageError("--device needs a node (/dev/video0, or 0) or virtual") }
        do { return try CaptureDevice.v4l2(path: nodePath(id)) } catch { throw RuntimeFailure(error) }
    }

    private static func choose(_ options: ParsedOptions) throws -> CaptureDevice {
        try checkCombinations(options)
        if options[input] != nil { return try openInputs(options)[0] }
        switch options[device] {
        case let id?:
            return try open(id)
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

    /// Which of `--device`, `--input`, `--realtime`, `--start` and `--reconnect` go together.
    private static func checkCombinations(_ options: ParsedOptions) throws {
        if options[device] != nil && options[input] != nil {
            throw UsageError("--device and --input cannot be used together")
        }
        if options[realtime] && options[input] == nil {
            throw UsageError("--realtime applies to --input only")
        }
        if options[start] != nil && options[input] == nil {
            throw UsageError("--start applies to --input only")
        }
        if options[reconnect] != nil && options[input] == nil {
            throw UsageError("--reconnect applies to a stream --input only")
        }
    }

    /// Every `--input`, opened: paths and file:// URLs as files, the rest as streams
    /// (``inputURL(_:what:)``); `--reconnect` needs a stream among them.
    private static func openInputs(_ options: ParsedOptions) throws -> [CaptureDevice] {
        let texts = options.all(input)
        guard !texts.contains(where: \.isEmpty) else { throw UsageError("--input needs a file, a folder or a stream URL") }
        let urls = try texts.map { try inputURL($0, what: "--input") }
        guard Set(urls.map(\.absoluteString)).count == urls.count else { throw UsageError("the same --input is given twice") }
        if options[reconnect] != nil, urls.allSatisfy(\.isFileURL) { throw UsageError("--reconnect applies to a stream --input only") }
        do { return try urls.map { try openInput($0, options: options, start: options[start] ?? 0) } } catch {
            throw RuntimeFailure(error)
        }
    }

    /// `--preset NAME`, one of the session presets (checked when parsed); `help` says the
    /// command's default.
    static func preset(help: String) -> Option<SessionPreset> {
        let names = SessionPreset.allCases.map(\.rawValue)
        // NAME in the usage line (the list is long); the names themselves in the help.
        let spec = OptionSpec(
            name: "preset", valueName: "NAME", help: help + " One of: " + names.joined(separator: ", ") + ".", kind: .choice(names))
        return Option(spec: spec) { SessionPreset(named: $0) }
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
