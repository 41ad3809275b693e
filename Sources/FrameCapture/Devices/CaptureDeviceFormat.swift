import FrameCore

/// One format a device offers: encoding, size and frame rates (as AVCaptureDevice.Format).
public struct CaptureDeviceFormat: Sendable, Hashable, CustomStringConvertible {
    /// The device's own name for the encoding (a V4L2 fourcc such as `YUYV` or `MJPG`).
    public var fourCC: String
    /// What FrameKit delivers without conversion; nil for compressed formats (decoded on capture).
    public var pixelFormat: PixelFormat?
    public var isCompressed: Bool
    public var size: FrameSize
    /// Supported frame rates, ascending.
    public var frameRates: [Double]
    /// Whether libv4l2 converts to this format in software (FrameKit prefers native ones).
    public var isEmulated: Bool
    /// The V4L2 pixel format code (0 for sources that are not V4L2 devices).
    public var v4l2Code: UInt32

    public init(
        fourCC: String, pixelFormat: PixelFormat?, isCompressed: Bool, size: FrameSize,
        frameRates: [Double], isEmulated: Bool = false, v4l2Code: UInt32 = 0
    ) {
        self.fourCC = fourCC
        self.pixelFormat = pixelFormat
        self.isCompressed = isCompressed
        self.size = size
        self.frameRates = frameRates
        self.isEmulated = isEmulated
        self.v4l2Code = v4l2Code
    }

    public var maxFrameRate: Double { frameRates.last ?? 0 }
    /// The shortest frame duration (1 / the highest rate), AVFoundation's min frame duration.
    public var minFrameDuration: Double { maxFrameRate > 0 ? 1 / maxFrameRate : 0 }

    public var description: String {
        "\(fourCC) \(size) @ \(frameRates.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: "/")) fps"
    }
}
