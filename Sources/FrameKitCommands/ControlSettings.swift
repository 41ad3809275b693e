import FrameKit

/// `--control NAME=VALUE`: device controls set when a command starts, and the controls as
/// JSON (for `devices --controls --json` and the preview page).
enum ControlSettings {
    static let control = Option.repeatable(
        "control", "NAME=VALUE",
        help:
            "Set a device control before capture starts (repeatable): a number, true/false, or a menu item's name, e.g. brightness=140, auto_exposure=manual_mode, exposure_time_absolute=200. `framekit devices --controls` lists them."
    )

    /// `NAME=VALUE` split, or nil when it is not of that shape.
    static func split(_ text: String) -> (name: String, value: String)? {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else { return nil }
        let value = text[text.index(after: eq)...]
        return value.isEmpty ? nil : (String(text[..<eq]), String(value))
    }

    /// Checks the shape of every `--control` (a usage error before anything opens).
    static func validate(_ options: ParsedOptions) throws {
        for setting in options.all(control) where split(setting) == nil {
            throw UsageError("--control takes NAME=VALUE (e.g. brightness=140), got '\(setting)'")
        }
    }

    /// Sets every `--control` on `device`, in order, under its configuration lock; says on
    /// stderr when the driver kept another value. An unknown name or a value the control does
    /// not take is a usage error naming what it does take.
    static func apply(_ options: ParsedOptions, to device: CaptureDevice) throws {
        let settings = options.all(control).compactMap(split)
        guard !settings.isEmpty else { return }
        do { try device.lockForConfiguration() } catch { throw RuntimeFailure(error) }
        defer { device.unlockForConfiguration() }
        for (name, text) in settings {
            let found: DeviceControl
            do { found = try device.control(named: name) } catch { throw UsageError("--control \(name): \(error)") }
            guard let value = found.parse(text) else {
                let menu = found.menu.map { DeviceControl.key(for: $0.name) }
                throw UsageError(
                    "--control \(name): '\(text)' is not a value of \(found.key) (\(found.kind.rawValue)"
                        + (menu.isEmpty ? ")" : ": \(menu.joined(separator: ", ")))"))
            }
            do {
                let kept = try device.setValue(value, for: found)
                if let kept, kept != value { Console.err("framekit: \(found.key): the driver kept \(kept), not \(value)") }
            } catch {
                if case .controlRejected(_, let reason) = error { throw UsageError("--control \(name): \(reason)") }
                throw RuntimeFailure(error)
            }
        }
    }

    static func json(_ c: DeviceControl) -> JSON {
        .object([
            ("key", .string(c.key)), ("name", .string(c.name)), ("id", .int(Int(c.id))), ("type", .string(c.kind.rawValue)),
            ("min", .int(Int(c.minimum))), ("max", .int(Int(c.maximum))), ("step", .int(Int(c.step))),
            ("default", .int(Int(c.defaultValue))), ("value", c.value.map { .int(Int($0)) } ?? .null),
            ("flags", .array(c.flags.names.map { .string($0) })), ("settable", .bool(c.isSettable)),
            (
                "menu",
                .array(
                    c.menu.map { m in
                        .object(
                            [("index", .int(Int(m.index))), ("name", .string(m.name))] + (m.value.map { [("value", .int(Int($0)))] } ?? []))
                    })
            )
        ])
    }

    /// What the preview's controls panel lists and sets: the controls of `current()`, the
    /// session's input now (the page follows a camera switch).
    static func offer(current: @escaping @Sendable () -> CaptureDevice?, on server: PreviewServer) {
        server.offerControls(
            list: { JSON.array(((try? current()?.controls()) ?? []).filter { $0.kind != .controlClass }.map(json)).text },
            set: { key, text in
                guard let device = current() else { return (false, JSON.object([("error", .string("no camera"))]).text) }
                do {
                    let found = try device.control(named: key)
                    guard let value = found.parse(text) else {
                        return (false, JSON.object([("error", .string("'\(text)' is not a value of \(found.key)"))]).text)
                    }
                    try device.lockForConfiguration()
                    defer { device.unlockForConfiguration() }
                    let kept = try device.setValue(value, for: found)
                    return (true, JSON.object([("key", .string(found.key)), ("value", kept.map { .int(Int($0)) } ?? .null)]).text)
                } catch {
                    return (false, JSON.object([("error", .string("\(error)"))]).text)
                }
            })
    }
}
