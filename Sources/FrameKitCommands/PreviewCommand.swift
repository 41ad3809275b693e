import Dispatch
import Foundation
import FrameKit
import Synchronization

/// `framekit preview`: the live preview over HTTP.
enum PreviewCommand: Command {
    static let name = "preview"
    static let stopsOnInterrupt = true
    static let abstract = "Serve a live preview (video with face boxes, live stats) over HTTP."
    static let usage =
        "framekit preview [--port 8080] [--host 127.0.0.1] [--allow-host NAME,...] [--duration S] [--device PATH|ID|virtual] [--preset NAME] [--max-clients 4] [--bitrate BITS/S] [--control NAME=VALUE]... [--stamp-capture-time] [--metrics HOST:PORT]"
    static let port = Option.integer("port", "PORT", 0...65535, help: "TCP port (default 8080; 0 picks a free one).")
    static let host = Option.text("host", "ADDRESS", help: "IPv4 address to bind (default 127.0.0.1: this machine only).")
    static let duration = Option.number("duration", "SECONDS", 0.1...1e7, help: "Stop after this long (default: until Ctrl-C).")
    static let device = Option.text(
        "device", "PATH|ID|virtual", help: "Camera to start with (default: the first V4L2 camera, else the virtual camera).")
    static let preset = DeviceChoice.preset(help: "Session preset (default vga640x480).")
    static let maxClients = Option.integer(
        "max-clients", "N", 1...256, help: "Video streams served at once (default 4); pages and stats are served beside them.")
    static let allowHost = Option.text(
        "allow-host", "NAME,...", help: "Host names the browser may use besides the bound address and localhost (DNS-rebinding guard).")
    static let bitrate = Option.integer(
        "bitrate", "BITS/S", 100_000...100_000_000,
        help:
            "The H.264 stream's cap in bits a second (default: 0.07 bits a pixel a frame at 30 fps — 720p 1.9 Mbit/s, 480p 0.65; CRF 23 below it)."
    )
    static let stampCaptureTime = Flag(
        "stamp-capture-time",
        help:
            "Stamp each frame's capture time along its top edge (40 blocks); the page opened as /?latency reads it back and measures capture to screen."
    )
    static let specs = [
        port.spec, host.spec, duration.spec, device.spec, ControlSettings.control.spec, preset.spec, maxClients.spec, allowHost.spec,
        bitrate.spec, stampCaptureTime.spec, MetricsEndpoint.option.spec
    ]

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit preview")
        var configuration = PreviewServer.Configuration()
        configuration.port = UInt16(options[port] ?? 8080)
        configuration.host = options[host] ?? "127.0.0.1"
        configuration.maxClients = options[maxClients] ?? 4
        configuration.allowedHosts = (options[allowHost] ?? "").split(separator: ",").map(String.init)
        let duration = options[Self.duration]
        let preset = options[Self.preset] ?? .vga640x480
        // Checked before the camera and the model are opened: a typo is a usage error.
        guard PreviewServer.isIPv4Address(configuration.host) else {
            throw UsageError("--host '\(configuration.host)' is not an IPv4 address (e.g. 127.0.0.1, or 0.0.0.0 for every interface)")
        }
        if !configuration.host.hasPrefix("127.") {
            Console.err(
                "framekit: warning: serving the camera on \(configuration.host), reachable from other machines; there is no authentication"
                    + (configuration.allowedHosts.isEmpty
                        ? " (browsers there must use a name or address given with --allow-host: others get 421)" : ""))
        }
        let first = try DeviceChoice.resolve(options)
        let all = [first] + DiscoverySession().devices.filter { $0.uniqueID != first.uniqueID }
        let session: CaptureSession
        let output = VideoDataOutput()
        let server = PreviewServer(configuration: configuration)
        let feed = PreviewFeed(server: server, videoBitrate: options[bitrate])
        let size = try DetectCommand.activeSize(device: first, preset: preset) // fails early, listing the sizes offered
        let tracker: FaceTracker
        do {
            InferenceThreads.set(1) // a live source: its passes beside the frame path (DetectCommand)
            tracker = try FaceTracker(detector: try FaceDetector(), options: .init(schedule: .background))
            try tracker.prepare(width: size.width, height: size.height)
            let stamp: [any Processor] = options[stampCaptureTime] ? [CaptureTimeStamp()] : []
            // No AnnotationStage: the feed boxes the faces itself — into the MJPEG pictures, and
            // beside the H.264 stream for the page to draw over the frame shown.
            // Detection while someone watches a stream only: an idle preview does no passes.
            output.processors = ProcessorChain(
                [WhileWatched(processor: FaceTrackingProcessor(tracker: tracker)) { !server.viewers.isEmpty }] + stamp)
        } catch { throw RuntimeFailure(error) }
        // No pass runs past this call on any path (FaceTracker.shutdown()).
        defer { tracker.shutdown() }
        output.setSampleBufferDelegate(feed)
        do {
            session = try DeviceChoice.session(device: first, preset: preset, output: output)
            try server.start()
            try session.startRunning()
        } catch let error as PreviewServer.ServerError {
            // The port taken, or not ours to bind: as --metrics says it (EX_UNAVAILABLE).
            throw RuntimeFailure("preview server: \(error)", exitCode: ExitCode.unavailable)
        } catch {
            server.stop()
            throw RuntimeFailure(error)
        }
        feed.reportPoolPeak { session.bufferUsage?.peakBytesInUse }
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
        ControlSettings.offer(current: { session.inputs.first?.device }, on: server)
        let metrics = try MetricsEndpoint.start(options)
        defer { metrics?.stop() }
        metrics?.add(MetricsSource(name: DetectCommand.sourceName(first), stats: feed.stats, counts: { output.counts }))
        metrics?.addLines { Self.viewerMetrics(server.viewers) }
        Console.err("framekit: preview at http://\(configuration.host):\(server.port)/ (Ctrl-C to stop)")
        Console.out(JSON.object([("preview", .string("http://\(configuration.host):\(server.port)/")), ("port", .int(server.port))]).text)
        let ended = DispatchSemaphore(value: 0)
        // Why the run ended, first reason kept: "signal", a session error, or (nothing set) the
        // duration.
        let endedBy = Mutex<String?>(nil)
        let end: @Sendable (String) -> Void = { reason in
            endedBy.withLock { $0 = $0 ?? reason }
            ended.signal()
        }
        let interrupt = SignalWatch.onInterrupt { end("signal") }
        defer { interrupt.cancel() }
        session.addObserver { note in
            if case .runtimeError(let error) = note { end("\(error)") }
            if case .wasInterrupted(let reason) = note, reason != .streamDisconnected { end("interrupted: \(reason)") }
        }
        if let duration { _ = ended.wait(timeout: .now() + duration) } else { ended.wait() }
        let viewers = server.viewers
        let poolPeak = session.bufferUsage?.peakBytesInUse
        server.stop()
        session.stopRunning()
        tracker.shutdown()
        let active = session.inputs.first?.activeFormat?.size ?? FrameSize(width: size.width, height: size.height)
        var snapshot = feed.stats.snapshot(
            preset: DetectPipeline.presetLabel(preset, device: session.inputs.first?.device ?? first, size: active),
            width: active.width, height: active.height,
            source: DetectCommand.sourceName(session.inputs.first?.device ?? first), counts: output.counts, poolPeakBytes: poolPeak)
        // Passes only while someone watched: 0 for a preview nobody opened.
        snapshot.detectionPasses = DetectionPasses(tracker.statistics)
        let summary =
            StatsJSON.summaryFields(snapshot) + [
                ("viewers_at_end", .int(viewers.count)), ("ended_by", .string(endedBy.withLock { $0 } ?? "duration"))
            ]
        Console.out(JSON.object([("summary", .object(summary))]).text)
        return ExitCode.success
    }

    /// Each viewer of the preview's streams, in Prometheus' text format.
    static func viewerMetrics(_ viewers: [PreviewViewer]) -> [String] {
        let families: [(String, String, String, (PreviewViewer) -> String)] = [
            (
                "framekit_preview_viewer_sent_bytes_total", "counter", "Bytes sent to a viewer of the preview since it connected.",
                { "\($0.bytesSent)" }
            ),
            (
                "framekit_preview_viewer_bytes_per_second", "gauge", "A viewer's average rate since it connected.",
                { "\($0.bytesPerSecond.rounded())" }
            ),
            (
                "framekit_preview_viewer_skipped_frames_total", "counter",
                "Frames a viewer never got (MJPEG: replaced before it was ready; H.264: skipped to a key frame after it fell behind).",
                { "\($0.skippedFrames)" }
            )
        ]
        return families.flatMap { name, type, help, value in
            ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"]
                + viewers.map { "\(name){stream=\"\($0.stream.rawValue)\",viewer=\"\($0.id)\"} \(value($0))" }
        }
    }
}
