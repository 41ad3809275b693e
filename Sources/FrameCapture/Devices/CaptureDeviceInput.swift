import Foundation
import Synchronization

/// A device as a session input (as AVCaptureDeviceInput).
public final class CaptureDeviceInput: Sendable, CustomStringConvertible {
    public let device: CaptureDevice
    private let active = Mutex<(format: CaptureDeviceFormat, frameRate: Double)?>(nil)

    /// Throws ``CaptureError/permissionDenied(path:)`` when this user may not open the device.
    public init(device: CaptureDevice) throws(CaptureError) {
        if case .v4l2(let path, let kernel) = device.backend, !kernel.isAccessible(path) {
            throw .permissionDenied(path: path)
        }
        self.device = device
    }

    /// The format and frame rate the running session chose (nil before it first starts).
    public var activeFormat: CaptureDeviceFormat? { active.withLock { $0?.format } }
    public var activeFrameRate: Double? { active.withLock { $0?.frameRate } }

    func setActive(_ format: CaptureDeviceFormat, frameRate: Double) { active.withLock { $0 = (format, frameRate) } }

    public var description: String { "input(\(device))" }
}
