import FrameCore

/// Converts a buffer to any other `PixelFormat` (what a capture output does when its
/// `videoSettings` ask for a format the device does not deliver natively).
public enum PixelFormatConversion {
    /// `source` in `format` (the same buffer when it is already in that format).
    public static func convert(
        _ source: PixelBuffer, to format: PixelFormat,
        matrix: ColorConversion.Matrix = .bt601
    ) throws(PixelBufferError) -> PixelBuffer {
        if source.format == format { return source }
        var out = try PixelBuffer(width: source.width, height: source.height, format: format)
        if ColorConversion.convertsToYCbCr(from: source.format, to: format) {
            try ColorConversion.convertToYCbCr(source, into: &out, matrix: matrix)
            return out
        }
        switch format {
        case .rgb24, .bgra32, .gray8:
            try ColorConversion.convert(source, into: &out, matrix: matrix)
        case .nv12VideoRange, .nv12FullRange, .i420, .yuyv:
            try PlanarYCbCr(reading: source).write(into: &out)
        }
        return out
    }
}
