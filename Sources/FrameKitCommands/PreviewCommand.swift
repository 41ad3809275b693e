import Dispatch
import Foundation
import FrameKit

/// `framekit preview`: the live preview over HTTP.
enum PreviewCommand: Command {
    static let name = "preview"
    static let abstract = "Serve a live preview (video with face boxes, live stats) over HTTP."
    static let usage =
        "framekit preview [--port 8080] [--host 127.0.0.1] [--allow-host NAME,...] [--duration S] [--device PATH|ID|virtual] [--preset NAME]"
    static let specs: [OptionSpec] = [
        OptionSpec(name: "port", valueName: "PORT", help: "TCP port (default 8080; 0 picks a free one)."),
        OptionSpec(name: "host", valueName: "ADDRESS", help: "IPv4 address to bind (default 127.0.0.1: this machine only)."),
        OptionSpec(name: "duration", valueName: "SECONDS", help: "Stop after this long (default: until Ctrl-C)."),
        OptionSpec(
            name: "device", valueName: "PATH|ID|virtual",
            help: "Camera to start with (default: the first V4L2 camera, else the virtual camera)."),
        OptionSpec(name: "preset", valueName: "NAME", help: "Session preset (default vga640x480)."),
        OptionSpec(
            name: "max-clients", valueName: "N", help: "Video streams served at once (default 4); pages and stats are served beside them."),
        OptionSpec(
            name: "allow-host", valueName: "NAME,...",
            help: "Host names the browser may use besides the bound address and localhost (DNS-rebinding guard).")
    ]

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "preview")
        var configuration = PreviewServer.Configuration()
        configuration.port = UInt16(try options.int("port", range: 0...65535) ?? 8080)
        configuration.host = options.string("host") ?? "127.0.0.1"
        configuration.maxClients = try options.int("max-clients", range: 1...256) ?? 4
        configuration.allowedHosts = (options.string("allow-host") ?? "").split(separator: ",").map(String.init)
        let duration = try options.double("duration", range: 0.1...1e7)
        let preset = try DeviceChoice.preset(options, default: .vga640x480)
        if configuration.host != "127.0.0.1" {
            Console.err(
                "framekit: warning: serving the camera on \(configuration.host), reachable from other machines; there is no authentication")
        }
        let first = try DeviceChoice.resolve(options)
        let all = [first] + DiscoverySession().devices.filter { $0.uniqueID != first.uniqueID }
        let session: CaptureSession
        let output = VideoDataOutput()
        let server = PreviewServer(configuration: configuration)
        let feed = PreviewFeed(server: server)
        let size = try DetectCommand.activeSize(device: first, preset: preset) // fails early, listing the sizes offered
        do {
            let detector = try FaceDetector()
            try detector.prepare(width: size.width, height: size.height)
            let tracker = try FaceTracker(detector: detector, options: .init(schedule: .background))
            output.processors = ProcessorChain([FaceTrackingProcessor(tracker: tracker), AnnotationStage()])
        } catch { throw RuntimeFailure("\(error)") }
        output.setSampleBufferDelegate(feed)
        do {
            session = try DeviceChoice.session(device: first, preset: preset, output: output)
            try server.start()
            try session.startRunning()
        } catch {
            server.stop()
            throw RuntimeFailure("\(error)")
        }
        // Camera switching: swap the input inside one configuration block.
        server.offerDevices(all.map(\.localizedName)) { index in
            do {
                try session.configure {
                    for input in session.inputs { session.removeInput(input) }
                    try session.addInput(CaptureDeviceInput(device: all[index]))
                    if !all[index].supportsSessionPreset(session.sessionPreset) { try session.setSessionPreset(.high) }
                }
                return true
            } catch {
                Console.err("framekit: cannot switch to \(all[index].localizedName): \(error)")
                return false
            }
        }
        Console.err("framekit: preview at http://\(configuration.host):\(server.port)/ (Ctrl-C to stop)")
        Console.out(JSON.object([("preview", .string("http://\(configuration.host):\(server.port)/")), ("port", .int(server.port))]).text)
        let ended = DispatchSemaphore(value: 0)
        let interrupt = SignalWatch.onInterrupt { ended.signal() }
        defer { interrupt.cancel() }
        session.addObserver { note in
            if case .runtimeError = note { ended.signal() }
            if case .wasInterrupted = note { ended.signal() }
        }
        if let duration { _ = ended.wait(timeout: .now() + duration) } else { ended.wait() }
        server.stop()
        session.stopRunning()
        return ExitCode.success
    }
}
