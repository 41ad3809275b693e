import FrameCore
import FramePixels
import Synchronization

/// The link between an input and an output (as AVCaptureConnection): rotation and mirroring
/// applied to what the output delivers, and whether it delivers at all.
public final class CaptureConnection: Sendable {
    private struct Settings {
        var rotation: Transform.Rotation = .none
        var mirrored = false
        var enabled = true
        var pixelFormat: PixelFormat?
        var stage: TransformStage?
    }
    private let settings: Mutex<Settings>

    init() { settings = Mutex(Settings()) }

    /// The format frames are delivered in (rotation support depends on it); nil until the
    /// session first starts with this output, then the last one delivered.
    var pixelFormat: PixelFormat? {
        get { settings.withLock { $0.pixelFormat } }
        set { settings.withLock { $0.pixelFormat = newValue } }
    }

    /// Clockwise rotation in degrees applied to delivered frames: 0, 90, 180 or 270.
    public var videoRotationAngle: Double { Double(settings.withLock { $0.rotation.rawValue }) }

    /// Sets ``videoRotationAngle``; throws for an angle the format cannot take (check
    /// ``isVideoRotationAngleSupported(_:)``). Before the session has started, the format is not
    /// known yet: any right angle is accepted here and checked when capture starts, where
    /// `startRunning()` (or the configuration's commit) throws if the format cannot take it.
    public func setVideoRotationAngle(_ angle: Double) throws(CaptureError) {
        guard isVideoRotationAngleSupported(angle), let rotation = Transform.Rotation(rawValue: Int(angle)) else {
            throw Self.unsupported(angle, pixelFormat)
        }
        settings.withLock { $0.rotation = rotation }
    }

    /// Whether `angle` can be applied to frames in the delivered format (any right angle while
    /// that format is not known yet).
    public func isVideoRotationAngleSupported(_ angle: Double) -> Bool {
        guard let rotation = Transform.Rotation(rawValue: Int(angle)), Double(rotation.rawValue) == angle else { return false }
        guard let pixelFormat else { return true }
        return Transform.supports(pixelFormat, rotation: rotation)
    }

    /// Checks the settings against the format capture is about to deliver (called before the
    /// session starts or commits a configuration).
    func validate(deliveredFormat: PixelFormat) throws(CaptureError) {
        let rotation = settings.withLock { $0.rotation }
        guard Transform.supports(deliveredFormat, rotation: rotation) else {
            throw Self.unsupported(Double(rotation.rawValue), deliveredFormat)
        }
    }

    private static func unsupported(_ angle: Double, _ format: PixelFormat?) -> CaptureError {
        let name = format.map { "\($0)" } ?? "this output"
        return .configuration("rotation by \(Int(angle)) degrees is not supported for \(name) (0, 90, 180, 270; YUYV: 0, 180)")
    }

    public var isVideoMirroringSupported: Bool { true }

    public var isVideoMirrored: Bool {
        get { settings.withLock { $0.mirrored } }
        set { settings.withLock { $0.mirrored = newValue } }
    }

    /// A disabled connection delivers nothing (frames are not counted as captured either).
    public var isEnabled: Bool {
        get { settings.withLock { $0.enabled } }
        set { settings.withLock { $0.enabled = newValue } }
    }

    /// Applies rotation and mirroring to `frame`, into a buffer reused frame after frame once
    /// the consumer lets go of the previous one (a ``TransformStage``, kept until the settings change).
    func apply(to frame: inout SampleBuffer) throws {
        let stage = settings.withLock { s -> TransformStage? in
            guard s.rotation != .none || s.mirrored else { return nil }
            if let kept = s.stage, kept.rotation == s.rotation, kept.mirrored == s.mirrored { return kept }
            s.stage = TransformStage(rotation: s.rotation, mirrored: s.mirrored)
            return s.stage
        }
        try stage?.process(&frame)
    }
}
