/// Named capture qualities, as AVFoundation's `AVCaptureSession.Preset`.
///
/// Fixed presets name one size; `photo`, `high`, `medium` and `low` are resolved against
/// what the device really offers (see ``resolve(among:)``).
public struct SessionPreset: RawRepresentable, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let photo = SessionPreset(rawValue: "photo")
    public static let high = SessionPreset(rawValue: "high")
    public static let medium = SessionPreset(rawValue: "medium")
    public static let low = SessionPreset(rawValue: "low")
    public static let cif352x288 = SessionPreset(rawValue: "cif352x288")
    public static let vga640x480 = SessionPreset(rawValue: "vga640x480")
    public static let iFrame960x540 = SessionPreset(rawValue: "iFrame960x540")
    public static let hd1280x720 = SessionPreset(rawValue: "hd1280x720")
    public static let iFrame1280x720 = SessionPreset(rawValue: "iFrame1280x720")
    public static let hd1920x1080 = SessionPreset(rawValue: "hd1920x1080")
    public static let hd4K3840x2160 = SessionPreset(rawValue: "hd4K3840x2160")

    public static let allCases: [SessionPreset] = [
        .photo, .high, .medium, .low, .cif352x288, .vga640x480, .iFrame960x540, .hd1280x720,
        .iFrame1280x720, .hd1920x1080, .hd4K3840x2160
    ]

    /// The preset called `name`, or nil.
    public init?(named name: String) {
        guard let match = Self.allCases.first(where: { $0.rawValue == name }) else { return nil }
        self = match
    }

    public var description: String { rawValue }

    /// The size a fixed preset names; nil for the device-relative ones.
    public var fixedSize: (width: Int, height: Int)? {
        switch self {
        case .cif352x288: (352, 288)
        case .vga640x480: (640, 480)
        case .iFrame960x540: (960, 540)
        case .hd1280x720, .iFrame1280x720: (1280, 720)
        case .hd1920x1080: (1920, 1080)
        case .hd4K3840x2160: (3840, 2160)
        default: nil
        }
    }

    /// Picks the size this preset means among `sizes` a device offers, or nil if none fits.
    /// - photo: the largest size; high: the largest up to 1920x1080; medium: the size closest
    ///   to 640x480 by pixel count; low: the smallest size of at least 192x144.
    public func resolve(among sizes: [FrameSize]) -> FrameSize? {
        guard !sizes.isEmpty else { return nil }
        let byArea = sizes.sorted { $0.area < $1.area }
        switch self {
        case .photo: return byArea.last
        case .high: return byArea.last(where: { $0.width <= 1920 && $0.height <= 1080 }) ?? byArea.first
        case .medium: return byArea.min { abs($0.area - 640 * 480) < abs($1.area - 640 * 480) }
        case .low: return byArea.first(where: { $0.width >= 192 && $0.height >= 144 }) ?? byArea.first
        default:
            guard let fixed = fixedSize else { return nil }
            return sizes.first { $0.width == fixed.width && $0.height == fixed.height }
        }
    }
}

/// A frame size in pixels.
public struct FrameSize: Hashable, Sendable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    public var area: Int { width * height }
    public var description: String { "\(width)x\(height)" }
}
