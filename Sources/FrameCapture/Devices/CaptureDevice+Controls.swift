import FrameCore

#if canImport(Glibc)
import Glibc
#endif

/// Device controls and the configuration lock (AVCaptureDevice's `lockForConfiguration`).
///
/// Reading needs no lock. Changing a control, or any of the exposure, focus, white-balance
/// and zoom settings built on them, needs ``lockForConfiguration()`` first — one owner at a
/// time: a second owner, in this process or another, gets
/// ``CaptureError/lockedForConfiguration(device:)``. On a V4L2 camera the lock is an `flock`
/// on the device node, so two FrameKit processes cannot both configure one camera; programs
/// that do not take it (v4l2-ctl) can still change controls, and those changes arrive as
/// ``SessionNotification/deviceControlChanged(_:)`` while a session runs.
extension CaptureDevice {
    /// Every control the device has, with current values, in the driver's order (class
    /// headings included, as v4l2-ctl lists them). Files and streams have none.
    public func controls() throws(CaptureError) -> [DeviceControl] {
        switch backend {
        case .v4l2: return try withControlHandle { (handle) throws(CaptureError) in try handle.queryControls() }
        case .virtual(let controls): return controls.controls()
        case .file, .custom: return []
        }
    }

    /// The control named `key` (as v4l2-ctl names it: "brightness", "white_balance_temperature").
    public func control(named key: String) throws(CaptureError) -> DeviceControl {
        let all = try controls()
        let wanted = DeviceControl.key(for: key)
        guard let control = all.first(where: { $0.key == wanted && $0.kind != .controlClass }) else {
            throw .unknownControl(key, device: localizedName, available: all.filter { $0.kind != .controlClass }.map(\.key))
        }
        return control
    }

    /// The control with V4L2 ID `id`, or nil when the device has none.
    func control(id: UInt32) throws(CaptureError) -> DeviceControl? { try controls().first { $0.id == id } }

    /// Sets control `key` to `value` — checked against its range, step and menu before the
    /// driver sees it — and returns the value the driver kept (drivers clamp and round), or nil
    /// for buttons and write-only controls. Needs ``lockForConfiguration()``.
    @discardableResult
    public func setValue(_ value: Int64, forControl key: String) throws(CaptureError) -> Int64? {
        try setValue(value, for: control(named: key))
    }

    /// As ``setValue(_:forControl:)`` for a control already read with ``controls()`` (no
    /// enumeration on each call, for a slider); checked against that description, and the
    /// driver has the last word (a control that became read-only or grabbed since is refused).
    @discardableResult
    public func setValue(_ value: Int64, for control: DeviceControl) throws(CaptureError) -> Int64? {
        try set(control, to: value)
    }

    /// Sets `control`; the lock is checked here.
    func set(_ control: DeviceControl, to value: Int64) throws(CaptureError) -> Int64? {
        switch (backend, configurationLock.withLock { $0 }) {
        case (_, .unlocked): throw .notLockedForConfiguration(device: localizedName)
        case (.v4l2, .v4l2(let handle)): return try handle.set(control, to: value)
        case (.virtual(let controls), .virtual): return try controls.set(control.id, to: value)
        default: throw .unknownControl(control.key, device: localizedName, available: [])
        }
    }

    /// Takes the configuration lock. Throws ``CaptureError/lockedForConfiguration(device:)``
    /// while another owner holds it (another device object or process for a V4L2 camera), and
    /// for a second call before ``unlockForConfiguration()``. Files and streams have nothing to
    /// configure: the lock is granted and changes nothing.
    public func lockForConfiguration() throws(CaptureError) {
        try configurationLock.withLock { (lock) throws(CaptureError) in
            guard case .unlocked = lock else { throw .lockedForConfiguration(device: localizedName) }
            switch backend {
            case .v4l2(let path, let kernel):
                let handle = try V4L2Handle(path: path, kernel: kernel)
                do throws(SystemCallError) {
                    _ = try retryingSystemCall("flock(\(path))") { kernel.flock(handle.fd, lock: true) }
                } catch {
                    if error.errno == EWOULDBLOCK || error.errno == EAGAIN { throw .lockedForConfiguration(device: localizedName) }
                    throw .systemCall(path: path, error)
                }
                lock = .v4l2(handle)
            case .virtual(let controls):
                guard controls.lock() else { throw .lockedForConfiguration(device: localizedName) }
                lock = .virtual
            case .file, .custom:
                lock = .virtual
            }
        }
    }

    /// Releases the lock (nothing when it is not held).
    public func unlockForConfiguration() {
        configurationLock.withLock { lock in
            switch lock {
            case .unlocked: return
            case .v4l2(let handle): _ = handle.kernel.flock(handle.fd, lock: false) // the descriptor closes with `handle`
            case .virtual: if case .virtual(let controls) = backend { controls.unlock() }
            }
            lock = .unlocked
        }
    }

    /// Whether this object holds the configuration lock.
    public var isLockedForConfiguration: Bool {
        configurationLock.withLock { if case .unlocked = $0 { false } else { true } }
    }

    /// Runs `body` with the lock's descriptor, or a descriptor opened for the call.
    private func withControlHandle<R>(_ body: (V4L2Handle) throws(CaptureError) -> R) throws(CaptureError) -> R {
        if case .v4l2(let handle) = configurationLock.withLock({ $0 }) { return try body(handle) }
        guard case .v4l2(let path, let kernel) = backend else { throw .configuration("not a V4L2 device") }
        return try body(V4L2Handle(path: path, kernel: kernel))
    }
}
