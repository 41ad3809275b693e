import CV4L2
import Synchronization

/// The virtual camera's controls, with V4L2's IDs, names and ranges (as a UVC webcam has them),
/// applied to its pixels: brightness and contrast; exposure time and gain once exposure is
/// manual; white-balance temperature once white balance is manual; digital zoom. Shared by the
/// device and the sources it runs, so a change shows in the next frame and as a
/// ``SessionNotification/deviceControlChanged(_:)``.
final class VirtualCameraControls: Sendable {
    /// The settings a frame is rendered with.
    struct Settings: Equatable {
        var brightness: Int64 = 128
        var contrast: Int64 = 128
        var manualExposure = false
        var exposureTime: Int64 = Self.neutralExposure // 100 µs units
        var gain: Int64 = Self.neutralGain
        var manualWhiteBalance = false
        var temperature: Int64 = Self.neutralTemperature
        var zoom: Int64 = 100

        static let neutralExposure: Int64 = 156
        static let neutralGain: Int64 = 32
        static let neutralTemperature: Int64 = 5000

        /// The luma multiplier exposure and gain give (1 in automatic exposure).
        var exposureFactor: Double {
            manualExposure ? Double(exposureTime) / Double(Self.neutralExposure) * Double(gain) / Double(Self.neutralGain) : 1
        }
        /// The Cb offset manual white balance gives: a lower temperature setting corrects for
        /// warmer light, so the picture turns bluer (Cb up, Cr down by as much).
        var chromaShift: Int { manualWhiteBalance ? Int((Double(Self.neutralTemperature - temperature) / 100).rounded()) : 0 }
        var isNeutral: Bool {
            brightness == 128 && contrast == 128 && exposureFactor == 1 && chromaShift == 0 && zoom == 100
        }
    }

    private struct State {
        var settings = Settings()
        var changes: [DeviceControl.Change] = []
        var changeCount = 0
        var locked = false
    }

    let deviceID: String
    private let state = Mutex(State())

    init(deviceID: String) { self.deviceID = deviceID }

    static let classUser: UInt32 = 0x0098_0001
    static let classCamera: UInt32 = 0x009a_0001

    var settings: Settings { state.withLock { $0.settings } }

    /// The controls with their values now (manual values flagged inactive in automatic mode).
    func controls() -> [DeviceControl] { state.withLock { Self.controls($0.settings) } }

    private static func controls(_ s: Settings) -> [DeviceControl] {
        let manualExposureFlags: DeviceControl.Flags = s.manualExposure ? [] : [.inactive]
        let manualWhiteFlags: DeviceControl.Flags = s.manualWhiteBalance ? [] : [.inactive]
        return [
            DeviceControl(
                id: classUser, name: "User Controls", kind: .controlClass, minimum: 0, maximum: 0, step: 0, defaultValue: 0,
                value: nil, flags: [.readOnly, .writeOnly]),
            DeviceControl(
                id: cv4l2_CID_BRIGHTNESS, name: "Brightness", kind: .integer, minimum: 0, maximum: 255, step: 1, defaultValue: 128,
                value: s.brightness, flags: [.slider]),
            DeviceControl(
                id: cv4l2_CID_CONTRAST, name: "Contrast", kind: .integer, minimum: 0, maximum: 255, step: 1, defaultValue: 128,
                value: s.contrast, flags: [.slider]),
            DeviceControl(
                id: cv4l2_CID_AUTO_WHITE_BALANCE, name: "White Balance, Automatic", kind: .boolean, minimum: 0, maximum: 1,
                step: 1, defaultValue: 1, value: s.manualWhiteBalance ? 0 : 1),
            DeviceControl(
                id: cv4l2_CID_GAIN, name: "Gain", kind: .integer, minimum: 1, maximum: 255, step: 1, defaultValue: Settings.neutralGain,
                value: s.gain, flags: manualExposureFlags),
            DeviceControl(
                id: cv4l2_CID_WHITE_BALANCE_TEMPERATURE, name: "White Balance Temperature", kind: .integer, minimum: 2800,
                maximum: 6500, step: 10, defaultValue: Settings.neutralTemperature, value: s.temperature, flags: manualWhiteFlags),
            DeviceControl(
                id: classCamera, name: "Camera Controls", kind: .controlClass, minimum: 0, maximum: 0, step: 0, defaultValue: 0,
                value: nil, flags: [.readOnly, .writeOnly]),
            DeviceControl(
                id: cv4l2_CID_EXPOSURE_AUTO, name: "Auto Exposure", kind: .menu, minimum: 0, maximum: 1, step: 1, defaultValue: 0,
                value: s.manualExposure ? 1 : 0,
                menu: [.init(index: 0, name: "Auto Mode"), .init(index: 1, name: "Manual Mode")]),
            DeviceControl(
                id: cv4l2_CID_EXPOSURE_ABSOLUTE, name: "Exposure Time, Absolute", kind: .integer, minimum: 1, maximum: 2000,
                step: 1, defaultValue: Settings.neutralExposure, value: s.exposureTime, flags: manualExposureFlags),
            DeviceControl(
                id: cv4l2_CID_ZOOM_ABSOLUTE, name: "Zoom, Absolute", kind: .integer, minimum: 100, maximum: 400, step: 1,
                defaultValue: 100, value: s.zoom)
        ]
    }

    /// Sets control `id` (checked as a driver would) and returns the value kept.
    func set(_ id: UInt32, to value: Int64) throws(CaptureError) -> Int64 {
        try state.withLock { (s) throws(CaptureError) -> Int64 in
            guard let control = Self.controls(s.settings).first(where: { $0.id == id }) else {
                throw .unknownControl(String(id), device: deviceID, available: [])
            }
            if let problem = control.problem(setting: value) { throw .controlRejected(control: control.key, reason: problem) }
            let before = Self.controls(s.settings)
            switch id {
            case cv4l2_CID_BRIGHTNESS: s.settings.brightness = value
            case cv4l2_CID_CONTRAST: s.settings.contrast = value
            case cv4l2_CID_AUTO_WHITE_BALANCE: s.settings.manualWhiteBalance = value == 0
            case cv4l2_CID_GAIN: s.settings.gain = value
            case cv4l2_CID_WHITE_BALANCE_TEMPERATURE: s.settings.temperature = value
            case cv4l2_CID_EXPOSURE_AUTO: s.settings.manualExposure = value == 1
            case cv4l2_CID_EXPOSURE_ABSOLUTE: s.settings.exposureTime = value
            case cv4l2_CID_ZOOM_ABSOLUTE: s.settings.zoom = value
            default: throw .controlRejected(control: control.key, reason: "it cannot be set")
            }
            // One change event per control whose value or flags moved, as V4L2_EVENT_CTRL.
            for (old, new) in zip(before, Self.controls(s.settings)) where old.value != new.value || old.flags != new.flags {
                s.changes.append(
                    DeviceControl.Change(
                        device: deviceID, id: new.id, key: new.key, value: new.value ?? 0, flags: new.flags,
                        valueChanged: old.value != new.value, flagsChanged: old.flags != new.flags, rangeChanged: false))
                s.changeCount += 1
            }
            if s.changes.count > 256 { s.changes.removeFirst(s.changes.count - 256) }
            return value
        }
    }

    /// The changes made since `cursor` (a count from an earlier call; 0 at first), and the new cursor.
    func changes(since cursor: Int) -> (changes: [DeviceControl.Change], cursor: Int) {
        state.withLock { s in
            let fresh = min(s.changes.count, s.changeCount - cursor)
            return (Array(s.changes.suffix(max(0, fresh))), s.changeCount)
        }
    }

    var changeCursor: Int { state.withLock { $0.changeCount } }

    /// The in-process configuration lock (the virtual camera belongs to this process).
    func lock() -> Bool {
        state.withLock { s in
            if s.locked { return false }
            s.locked = true
            return true
        }
    }
    func unlock() { state.withLock { $0.locked = false } }
}
