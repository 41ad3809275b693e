// The umbrella: `import FrameKit` brings every FrameKit module.
@_exported import FrameBenchmark
@_exported import FrameCapture
@_exported import FrameCore
@_exported import FrameImageIO
@_exported import FrameMedia
@_exported import FrameModels
@_exported import FramePixels
@_exported import FramePreview
@_exported import FrameProcessors
@_exported import FrameStats

/// FrameKit's release: what `framekit --version`, the C API's `fk_version()` and the packages
/// (scripts/package-deb, python/pyproject.toml) say.
public enum FrameKitVersion {
    public static let current = "0.1.0"
}
