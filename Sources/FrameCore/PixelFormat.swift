/// The pixel layouts a ``PixelBuffer`` can hold.
///
/// Raw values are the four-character codes AVFoundation uses for the same layouts
/// (`kCVPixelFormatType_*`), so they read familiarly in logs and JSON.
public enum PixelFormat: String, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Y plane + interleaved CbCr plane at half resolution, luma 16–235 (`420v`; V4L2 NV12).
    case nv12VideoRange = "420v"
    /// As ``nv12VideoRange`` with full-range luma 0–255 (`420f`).
    case nv12FullRange = "420f"
    /// Three planes Y, Cb, Cr; chroma at half resolution (`y420`; V4L2 YU12).
    case i420 = "y420"
    /// Packed 4:2:2, Y0 Cb Y1 Cr (`yuvs`; V4L2 YUYV).
    case yuyv = "yuvs"
    /// B, G, R, A bytes in memory (`BGRA`; V4L2 ABGR32/XBGR32).
    case bgra32 = "BGRA"
    /// R, G, B bytes in memory (`24RG`; V4L2 RGB24).
    case rgb24 = "24RG"
    /// One 8-bit luminance plane (`L008`; V4L2 GREY).
    case gray8 = "L008"

    public var description: String {
        switch self {
        case .nv12VideoRange: "NV12 (video range)"
        case .nv12FullRange: "NV12 (full range)"
        case .i420: "I420"
        case .yuyv: "YUYV"
        case .bgra32: "32BGRA"
        case .rgb24: "RGB24"
        case .gray8: "GRAY8"
        }
    }

    /// The name accepted on the command line and in settings (`nv12`, `yuyv`, `bgra`, …).
    public var shortName: String {
        switch self {
        case .nv12VideoRange: "nv12"
        case .nv12FullRange: "nv12-full"
        case .i420: "i420"
        case .yuyv: "yuyv"
        case .bgra32: "bgra"
        case .rgb24: "rgb24"
        case .gray8: "gray"
        }
    }

    public init?(shortName: String) {
        guard let match = PixelFormat.allCases.first(where: { $0.shortName == shortName.lowercased() }) else {
            return nil
        }
        self = match
    }

    public var planeCount: Int {
        switch self {
        case .nv12VideoRange, .nv12FullRange: 2
        case .i420: 3
        case .yuyv, .bgra32, .rgb24, .gray8: 1
        }
    }

    /// Whether the format stores Y'CbCr (and so has a range and a matrix).
    public var isYCbCr: Bool {
        switch self {
        case .nv12VideoRange, .nv12FullRange, .i420, .yuyv: true
        case .bgra32, .rgb24, .gray8: false
        }
    }

    /// Width and height must be multiples of these (chroma subsampling).
    public var sizeAlignment: (width: Int, height: Int) {
        switch self {
        case .nv12VideoRange, .nv12FullRange, .i420: (2, 2)
        case .yuyv: (2, 1)
        case .bgra32, .rgb24, .gray8: (1, 1)
        }
    }

    /// Width, height and bytes per pixel of plane `index` of an image `width` x `height`.
    public func planeGeometry(_ index: Int, width: Int, height: Int) -> (width: Int, height: Int, bytesPerPixel: Int) {
        precondition(index >= 0 && index < planeCount, "plane \(index) out of range for \(self)")
        switch (self, index) {
        case (.nv12VideoRange, 0), (.nv12FullRange, 0), (.i420, 0), (.gray8, 0): return (width, height, 1)
        case (.nv12VideoRange, _), (.nv12FullRange, _): return (width / 2, height / 2, 2)
        case (.i420, _): return (width / 2, height / 2, 1)
        case (.yuyv, _): return (width, height, 2)
        case (.bgra32, _): return (width, height, 4)
        case (.rgb24, _): return (width, height, 3)
        default: preconditionFailure("unreachable")
        }
    }

    /// Bytes of a tightly packed image of this size.
    public func byteCount(width: Int, height: Int) -> Int {
        (0..<planeCount).reduce(0) { total, plane in
            let g = planeGeometry(plane, width: width, height: height)
            return total + g.width * g.height * g.bytesPerPixel
        }
    }
}
