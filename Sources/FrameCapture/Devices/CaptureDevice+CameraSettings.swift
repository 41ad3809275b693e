import CV4L2

/// Exposure, focus, white balance, zoom and flash in AVCaptureDevice's shape, answered from
/// the controls the device really has (V4L2's camera-class and user controls; the virtual
/// camera's own). Setters need ``lockForConfiguration()``; a mode the device lacks is
/// ``CaptureError/unsupportedMode(_:device:)``, as AVFoundation refuses a mode its
/// `is…Supported` denies. docs/device-controls.md has the AVFoundation name table.
extension CaptureDevice {
    public enum ExposureMode: Int, Sendable, CaseIterable, CustomStringConvertible {
        case locked, autoExpose, continuousAutoExposure, custom
        public var description: String { ["locked", "autoExpose", "continuousAutoExposure", "custom"][rawValue] }
    }
    public enum FocusMode: Int, Sendable, CaseIterable, CustomStringConvertible {
        case locked, autoFocus, continuousAutoFocus
        public var description: String { ["locked", "autoFocus", "continuousAutoFocus"][rawValue] }
    }
    public enum WhiteBalanceMode: Int, Sendable, CaseIterable, CustomStringConvertible {
        case locked, autoWhiteBalance, continuousAutoWhiteBalance
        public var description: String { ["locked", "autoWhiteBalance", "continuousAutoWhiteBalance"][rawValue] }
    }
    public enum FlashMode: Int, Sendable, CaseIterable, CustomStringConvertible {
        case off, on, auto
        public var description: String { ["off", "on", "auto"][rawValue] }
    }
    /// A white point as AVFoundation gives it; V4L2 has no tint, so only 0 can be set.
    public struct WhiteBalanceTemperatureAndTintValues: Sendable, Equatable {
        public var temperature: Float
        public var tint: Float
        public init(temperature: Float, tint: Float) {
            self.temperature = temperature
            self.tint = tint
        }
    }

    /// The controls these settings use, read once per call.
    private struct Camera {
        var all: [UInt32: DeviceControl]
        init(_ controls: [DeviceControl]) {
            all = Dictionary(controls.filter { $0.kind != .controlClass }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        }
        subscript(_ id: UInt32) -> DeviceControl? { all[id] }
        func menu(_ id: UInt32, has index: UInt32) -> Bool { all[id]?.menu.contains { $0.index == Int64(index) } ?? false }
    }

    private func camera() throws(CaptureError) -> Camera { Camera(try controls()) }

    private func requireLock() throws(CaptureError) {
        guard isLockedForConfiguration else { throw .notLockedForConfiguration(device: localizedName) }
    }

    // MARK: Exposure

    public func isExposureModeSupported(_ mode: ExposureMode) -> Bool {
        guard let c = try? camera() else { return false }
        return Self.exposureModes(c).contains(mode)
    }

    private static func exposureModes(_ c: Camera) -> [ExposureMode] {
        if c[cv4l2_CID_EXPOSURE_AUTO] != nil {
            var modes: [ExposureMode] = []
            let manual = c.menu(cv4l2_CID_EXPOSURE_AUTO, has: cv4l2_EXPOSURE_MANUAL)
            if manual { modes.append(.locked) }
            if c.menu(cv4l2_CID_EXPOSURE_AUTO, has: cv4l2_EXPOSURE_AUTO)
                || c.menu(cv4l2_CID_EXPOSURE_AUTO, has: cv4l2_EXPOSURE_APERTURE_PRIORITY)
            {
                modes.append(.continuousAutoExposure)
            }
            if manual && (c[cv4l2_CID_EXPOSURE_ABSOLUTE] != nil || c[cv4l2_CID_GAIN] != nil) { modes.append(.custom) }
            return modes
        }
        if c[cv4l2_CID_AUTOGAIN] != nil {
            return c[cv4l2_CID_GAIN] != nil ? [.locked, .continuousAutoExposure, .custom] : [.locked, .continuousAutoExposure]
        }
        return [.locked] // nothing to change: what the camera does is fixed
    }

    /// The exposure mode now: automatic while the device's auto-exposure (or automatic gain) is on.
    public var exposureMode: ExposureMode {
        get throws(CaptureError) {
            let c = try camera()
            let manual: Bool
            if let auto = c[cv4l2_CID_EXPOSURE_AUTO] {
                manual = auto.value == Int64(cv4l2_EXPOSURE_MANUAL) || auto.value == Int64(cv4l2_EXPOSURE_SHUTTER_PRIORITY)
            } else if let auto = c[cv4l2_CID_AUTOGAIN] {
                manual = auto.value == 0
            } else {
                return .locked
            }
            return manual ? (exposureIsCustom.withLock { $0 } ? .custom : .locked) : .continuousAutoExposure
        }
    }

    /// Sets `.locked` (the exposure stays where automatic exposure had it) or
    /// `.continuousAutoExposure`; `.custom` is entered with ``setExposureModeCustom(duration:iso:)``.
    public func setExposureMode(_ mode: ExposureMode) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard Self.exposureModes(c).contains(mode), mode != .custom else {
            throw .unsupportedMode(
                mode == .custom ? "exposureMode .custom set directly (use setExposureModeCustom)" : "exposure mode \(mode)",
                device: localizedName)
        }
        if let auto = c[cv4l2_CID_EXPOSURE_AUTO] {
            let value =
                mode == .locked
                ? cv4l2_EXPOSURE_MANUAL
                : (c.menu(cv4l2_CID_EXPOSURE_AUTO, has: cv4l2_EXPOSURE_AUTO) ? cv4l2_EXPOSURE_AUTO : cv4l2_EXPOSURE_APERTURE_PRIORITY)
            _ = try set(auto, to: Int64(value))
        } else if let auto = c[cv4l2_CID_AUTOGAIN] {
            if mode == .locked, let gain = c[cv4l2_CID_GAIN], let now = gain.value {
                _ = try set(auto, to: 0)
                _ = try? set(gain, to: now) // hold the gain automatic gain had chosen
            } else {
                _ = try set(auto, to: mode == .locked ? 0 : 1)
            }
        }
        exposureIsCustom.withLock { $0 = false }
    }

    /// Manual exposure with this duration (seconds; V4L2 counts 100 µs units) and ISO (the
    /// device's ISO control, or else its gain in the driver's units); nil keeps the current one
    /// (AVFoundation's `currentExposureDuration` / `currentISO`). Out of range is
    /// ``CaptureError/controlRejected(control:reason:)``.
    public func setExposureModeCustom(duration: Double?, iso: Float?) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard Self.exposureModes(c).contains(.custom) else { throw .unsupportedMode("exposure mode custom", device: localizedName) }
        if let auto = c[cv4l2_CID_EXPOSURE_AUTO] {
            _ = try set(auto, to: Int64(cv4l2_EXPOSURE_MANUAL))
        } else if let auto = c[cv4l2_CID_AUTOGAIN] {
            _ = try set(auto, to: 0)
        }
        if let duration {
            guard let time = c[cv4l2_CID_EXPOSURE_ABSOLUTE] else {
                throw .unsupportedMode("a custom exposure duration (no exposure_time_absolute control)", device: localizedName)
            }
            guard duration.isFinite, duration > 0 else { throw .invalidArgument("an exposure duration must be positive, got \(duration)") }
            _ = try set(time, to: Int64((duration * 10_000).rounded()))
        }
        if let iso {
            guard iso.isFinite else { throw .invalidArgument("an ISO must be a number, got \(iso)") }
            if let sensitivity = c[cv4l2_CID_ISO_SENSITIVITY], let item = sensitivity.menu.first(where: { $0.value == Int64(iso) }) {
                _ = try set(sensitivity, to: item.index)
            } else if let gain = c[cv4l2_CID_GAIN] {
                _ = try set(gain, to: Int64(iso.rounded()))
            } else {
                throw .unsupportedMode("a custom ISO (no gain or ISO control)", device: localizedName)
            }
        }
        exposureIsCustom.withLock { $0 = true }
    }

    /// The exposure time now, in seconds; nil without an exposure-time control.
    public var exposureDuration: Double? {
        get throws(CaptureError) { try camera()[cv4l2_CID_EXPOSURE_ABSOLUTE]?.value.map { Double($0) / 10_000 } }
    }
    /// The exposure-time control's range in seconds (AVFoundation has these on `activeFormat`).
    public var exposureDurationRange: ClosedRange<Double>? {
        get throws(CaptureError) {
            try camera()[cv4l2_CID_EXPOSURE_ABSOLUTE].map { Double($0.minimum) / 10_000...Double($0.maximum) / 10_000 }
        }
    }
    /// The ISO (or gain) now; nil without either control.
    public var iso: Float? {
        get throws(CaptureError) {
            let c = try camera()
            if let sensitivity = c[cv4l2_CID_ISO_SENSITIVITY], let v = sensitivity.value,
                let item = sensitivity.menu.first(where: { $0.index == v }), let number = item.value
            {
                return Float(number)
            }
            return c[cv4l2_CID_GAIN]?.value.map(Float.init)
        }
    }
    /// The range of ``iso`` (AVFoundation's `activeFormat.minISO…maxISO`).
    public var isoRange: ClosedRange<Float>? {
        get throws(CaptureError) {
            let c = try camera()
            if let values = c[cv4l2_CID_ISO_SENSITIVITY]?.menu.compactMap(\.value), let lo = values.min(), let hi = values.max() {
                return Float(lo)...Float(hi)
            }
            return c[cv4l2_CID_GAIN].map { Float($0.minimum)...Float($0.maximum) }
        }
    }

    // MARK: Focus

    public func isFocusModeSupported(_ mode: FocusMode) -> Bool {
        guard let c = try? camera() else { return false }
        return Self.focusModes(c).contains(mode)
    }

    private static func focusModes(_ c: Camera) -> [FocusMode] {
        var modes: [FocusMode] = [.locked] // a fixed-focus camera is always locked
        if c[cv4l2_CID_AUTO_FOCUS_START] != nil { modes.append(.autoFocus) }
        if c[cv4l2_CID_FOCUS_AUTO] != nil { modes.append(.continuousAutoFocus) }
        return modes
    }

    public var focusMode: FocusMode {
        get throws(CaptureError) { try camera()[cv4l2_CID_FOCUS_AUTO]?.value == 1 ? .continuousAutoFocus : .locked }
    }

    /// `.locked` holds the lens where it is; `.autoFocus` focuses once (V4L2's auto_focus_start)
    /// and then holds; `.continuousAutoFocus` keeps focusing.
    public func setFocusMode(_ mode: FocusMode) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard Self.focusModes(c).contains(mode) else { throw .unsupportedMode("focus mode \(mode)", device: localizedName) }
        if let auto = c[cv4l2_CID_FOCUS_AUTO] { _ = try set(auto, to: mode == .continuousAutoFocus ? 1 : 0) }
        if mode == .autoFocus, let start = c[cv4l2_CID_AUTO_FOCUS_START] { _ = try set(start, to: 1) }
    }

    /// Whether ``setFocusModeLocked(lensPosition:)`` can move the lens (a focus_absolute control).
    public var isLockingFocusWithCustomLensPositionSupported: Bool { (try? camera()[cv4l2_CID_FOCUS_ABSOLUTE]) != nil }

    /// The lens position from 0 (nearest) to 1 (farthest) across the focus control's range;
    /// nil without one.
    public var lensPosition: Float? {
        get throws(CaptureError) {
            guard let focus = try camera()[cv4l2_CID_FOCUS_ABSOLUTE], let v = focus.value, focus.maximum > focus.minimum else {
                return nil
            }
            return Float(v - focus.minimum) / Float(focus.maximum - focus.minimum)
        }
    }

    /// Focus locked at `lensPosition` (0…1 across the focus control's range, rounded to its step).
    public func setFocusModeLocked(lensPosition: Float) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard let focus = c[cv4l2_CID_FOCUS_ABSOLUTE] else { throw .unsupportedMode("a custom lens position", device: localizedName) }
        guard (0...1).contains(lensPosition) else { throw .invalidArgument("a lens position is 0…1, got \(lensPosition)") }
        if let auto = c[cv4l2_CID_FOCUS_AUTO] { _ = try set(auto, to: 0) }
        _ = try set(focus, to: Self.onStep(focus, Double(lensPosition)))
    }

    /// The value `fraction` of the way across `control`'s range, on its step.
    private static func onStep(_ control: DeviceControl, _ fraction: Double) -> Int64 {
        let span = Double(control.maximum - control.minimum)
        let step = Double(max(1, control.step))
        return control.minimum + Int64(((fraction * span) / step).rounded() * step)
    }

    // MARK: White balance

    public func isWhiteBalanceModeSupported(_ mode: WhiteBalanceMode) -> Bool {
        guard let c = try? camera() else { return false }
        return Self.whiteBalanceModes(c).contains(mode)
    }

    private static func whiteBalanceModes(_ c: Camera) -> [WhiteBalanceMode] {
        guard c[cv4l2_CID_AUTO_WHITE_BALANCE] != nil || c[cv4l2_CID_WHITE_BALANCE_TEMPERATURE] != nil else { return [.locked] }
        var modes: [WhiteBalanceMode] = [.locked]
        if c[cv4l2_CID_DO_WHITE_BALANCE] != nil { modes.append(.autoWhiteBalance) }
        if c[cv4l2_CID_AUTO_WHITE_BALANCE] != nil { modes.append(.continuousAutoWhiteBalance) }
        return modes
    }

    public var whiteBalanceMode: WhiteBalanceMode {
        get throws(CaptureError) {
            try camera()[cv4l2_CID_AUTO_WHITE_BALANCE]?.value == 1 ? .continuousAutoWhiteBalance : .locked
        }
    }

    /// `.locked` holds the current white point; `.autoWhiteBalance` balances once (V4L2's
    /// do_white_balance) and holds; `.continuousAutoWhiteBalance` keeps balancing.
    public func setWhiteBalanceMode(_ mode: WhiteBalanceMode) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard Self.whiteBalanceModes(c).contains(mode) else {
            throw .unsupportedMode("white balance mode \(mode)", device: localizedName)
        }
        if let auto = c[cv4l2_CID_AUTO_WHITE_BALANCE] { _ = try set(auto, to: mode == .continuousAutoWhiteBalance ? 1 : 0) }
        if mode == .autoWhiteBalance, let once = c[cv4l2_CID_DO_WHITE_BALANCE] { _ = try set(once, to: 1) }
    }

    /// The white-balance temperature now, in kelvin, with tint 0; nil without a temperature control.
    public var whiteBalanceTemperatureAndTintValues: WhiteBalanceTemperatureAndTintValues? {
        get throws(CaptureError) {
            try camera()[cv4l2_CID_WHITE_BALANCE_TEMPERATURE]?.value.map { .init(temperature: Float($0), tint: 0) }
        }
    }

    /// The temperature control's range in kelvin.
    public var whiteBalanceTemperatureRange: ClosedRange<Float>? {
        get throws(CaptureError) {
            try camera()[cv4l2_CID_WHITE_BALANCE_TEMPERATURE].map { Float($0.minimum)...Float($0.maximum) }
        }
    }

    /// White balance locked at a temperature (rounded to the control's step); a tint other
    /// than 0 is refused (V4L2 has none).
    public func setWhiteBalanceModeLocked(with values: WhiteBalanceTemperatureAndTintValues) throws(CaptureError) {
        try requireLock()
        let c = try camera()
        guard let temperature = c[cv4l2_CID_WHITE_BALANCE_TEMPERATURE] else {
            throw .unsupportedMode("a white-balance temperature", device: localizedName)
        }
        guard values.tint == 0 else { throw .invalidArgument("V4L2 white balance has no tint; use 0, got \(values.tint)") }
        guard values.temperature.isFinite else { throw .invalidArgument("a temperature must be a number") }
        if let auto = c[cv4l2_CID_AUTO_WHITE_BALANCE] { _ = try set(auto, to: 0) }
        let step = max(1, temperature.step)
        let kelvin = Int64(values.temperature.rounded())
        _ = try set(temperature, to: temperature.minimum + ((kelvin - temperature.minimum + step / 2) / step) * step)
    }

    // MARK: Zoom

    /// The zoom control's value over its minimum (UVC cameras count 100…500 for 1x…5x); 1
    /// without a zoom control.
    public var videoZoomFactor: Double {
        get throws(CaptureError) {
            guard let zoom = try camera()[cv4l2_CID_ZOOM_ABSOLUTE], let v = zoom.value else { return 1 }
            return Self.factor(zoom, v)
        }
    }
    public var minAvailableVideoZoomFactor: Double { 1 }
    public var maxAvailableVideoZoomFactor: Double {
        guard let zoom = try? camera()[cv4l2_CID_ZOOM_ABSOLUTE] else { return 1 }
        return Self.factor(zoom, zoom.maximum)
    }

    private static func factor(_ zoom: DeviceControl, _ value: Int64) -> Double {
        zoom.minimum > 0 ? Double(value) / Double(zoom.minimum) : 1 + Double(value - zoom.minimum) / 100
    }

    /// Zooms to `factor` (1…``maxAvailableVideoZoomFactor``, rounded to the control's step).
    public func setVideoZoomFactor(_ factor: Double) throws(CaptureError) {
        try requireLock()
        guard let zoom = try camera()[cv4l2_CID_ZOOM_ABSOLUTE] else {
            guard factor == 1 else { throw .unsupportedMode("zoom (no zoom_absolute control)", device: localizedName) }
            return
        }
        let top = Self.factor(zoom, zoom.maximum)
        guard factor.isFinite, factor >= 1, factor <= top + 1e-9 else {
            throw .invalidArgument("a zoom factor is 1…\(top), got \(factor)")
        }
        let raw = zoom.minimum > 0 ? factor * Double(zoom.minimum) : Double(zoom.minimum) + (factor - 1) * 100
        let step = Double(max(1, zoom.step))
        let value = zoom.minimum + Int64(((raw - Double(zoom.minimum)) / step).rounded() * step)
        _ = try set(zoom, to: min(zoom.maximum, value))
    }

    // MARK: Flash

    /// The flash modes the device's flash controls offer: `.off` and `.on` where its
    /// flash_led_mode menu has a flash item, none otherwise (V4L2 has no automatic flash).
    public var supportedFlashModes: [FlashMode] {
        guard let c = try? camera(), c.menu(cv4l2_CID_FLASH_LED_MODE, has: cv4l2_FLASH_LED_MODE_FLASH) else { return [] }
        return [.off, .on]
    }
}
