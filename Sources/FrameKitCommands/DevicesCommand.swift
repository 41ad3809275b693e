import Foundation
import FrameKit

/// `framekit devices`: every camera and the virtual camera, with what each offers.
enum DevicesCommand: Command {
    static let name = "devices"
    static let abstract = "List capture devices with their formats, sizes, frame rates and supported presets."
    static let usage = "framekit devices [--controls] [--stream URL ...] [--json]"
    static let json = Flag("json", help: "Print JSON instead of text.")
    static let controls = Flag(
        "controls", help: "List each device's controls too, with ranges, values, flags and menu items (as v4l2-ctl --list-ctrls-menus).")
    static let stream = Option.repeatable(
        "stream", "URL", help: "Also probe this network stream (rtsp://, tcp://…) and list it as a device (repeatable).")
    static let specs = [json.spec, controls.spec, stream.spec]

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit devices")
        var streams: [URL] = []
        for text in options.all(stream) {
            guard text.contains("://") else { throw UsageError("--stream takes a URL (rtsp://…), got '\(text)'") }
            // The same rules as --input: a stream protocol, and never one that would listen.
            streams.append(try DeviceChoice.inputURL(text, what: "--stream"))
        }
        let discovery = DiscoverySession(deviceTypes: [.external, .virtual, .stream], streams: streams)
        let devices = discovery.devices
        let withControls = options[controls]
        // A device whose controls cannot be read (it went away since discovery) is listed without them.
        func controlsOf(_ device: CaptureDevice) -> [DeviceControl] { (try? device.controls()) ?? [] }
        if options[json] {
            Console.out(
                JSON.object([
                    (
                        "devices",
                        .array(
                            devices.map { device in
                                guard withControls, case .object(let fields) = json(device) else { return json(device) }
                                return .object(
                                    fields + [
                                        (
                                            "controls",
                                            .array(controlsOf(device).filter { $0.kind != .controlClass }.map(ControlSettings.json))
                                        )
                                    ])
                            })
                    ),
                    (
                        "skipped",
                        .array(discovery.problems.map { .object([("path", .string($0.path)), ("reason", .string("\($0.error)"))]) })
                    )
                ]).text)
        } else {
            for device in devices {
                Console.out("\(device.localizedName)  [\(device.uniqueID)]  \(device.deviceType.rawValue), driver \(device.modelID)")
                Console.out("  presets: \(device.supportedPresets.map(\.rawValue).joined(separator: ", "))")
                for format in device.formats { Console.out("  \(format)") }
                if withControls {
                    let list = controlsOf(device)
                    Console.out(list.isEmpty ? "  controls: none" : "  controls:")
                    for control in list {
                        // v4l2-ctl's layout: a blank line and the class name, then indented controls.
                        for line in control.description.split(separator: "\n", omittingEmptySubsequences: false)
                        where !(control.kind == .controlClass && line.isEmpty) {
                            Console.out(control.kind == .controlClass ? "\n  \(line)\n" : "    \(line)")
                        }
                    }
                }
            }
            for problem in discovery.problems { Console.err("skipped \(problem.path): \(problem.error)") }
        }
        return ExitCode.success
    }

    static func json(_ device: CaptureDevice) -> JSON {
        .object([
            ("id", .string(device.uniqueID)), ("name", .string(device.localizedName)), ("type", .string(device.deviceType.rawValue)),
            ("driver", .string(device.modelID)),
            (
                "formats",
                .array(
                    device.formats.map { f in
                        .object([
                            ("fourcc", .string(f.fourCC)), ("pixel_format", f.pixelFormat.map { .string($0.shortName) } ?? .null),
                            ("compressed", .bool(f.isCompressed)), ("emulated", .bool(f.isEmulated)),
                            ("width", .int(f.size.width)), ("height", .int(f.size.height)),
                            ("frame_rates", .array(f.frameRates.map { .number($0, decimals: 3) }))
                        ])
                    })
            ),
            ("presets", .array(device.supportedPresets.map { .string($0.rawValue) }))
        ])
    }
}
