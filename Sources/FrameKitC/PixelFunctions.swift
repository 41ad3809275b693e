import CFrameKitAPI
import FrameKit

/// Runs `body` on the source frame into a new frame of `width` x `height` in `format`, and
/// hands the new frame out.
private func makeFrame(
    from source: OpaquePointer?, width: Int? = nil, height: Int? = nil, format: PixelFormat? = nil,
    out: UnsafeMutablePointer<OpaquePointer?>?, error: UnsafeMutablePointer<fk_error>?,
    _ body: (PixelBuffer, inout PixelBuffer) throws -> Void
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        let pixels = try FrameHandle.from(source).pixels
        guard let out else { throw InvalidArgument("out is NULL") }
        var result = try PixelBuffer(width: width ?? pixels.width, height: height ?? pixels.height, format: format ?? pixels.format)
        try body(pixels, &result)
        out.pointee = Handle.make(FrameHandle(result))
    }
}

@_cdecl("fk_convert")
public func fkConvert(
    _ source: OpaquePointer?, _ format: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?
)
    -> fk_status
{
    guard let target = try? FormatCode.format(format) else {
        return reporting(error) { throw InvalidArgument("unknown pixel format \(format)") }
    }
    return makeFrame(from: source, format: target, out: out, error: error) { pixels, result in
        if ColorConversion.convertsToYCbCr(from: pixels.format, to: target) {
            try ColorConversion.convertToYCbCr(pixels, into: &result)
        } else {
            try ColorConversion.convert(pixels, into: &result)
        }
    }
}

@_cdecl("fk_resize")
public func fkResize(
    _ source: OpaquePointer?, _ width: Int32, _ height: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    guard (1...16384).contains(width), (1...16384).contains(height) else {
        return reporting(error) { throw InvalidArgument("a resize to \(width)x\(height) (each side 1...16384)") }
    }
    return makeFrame(from: source, width: Int(width), height: Int(height), out: out, error: error) { pixels, result in
        try Resize.bilinear(pixels, into: &result)
    }
}

@_cdecl("fk_gaussian_blur")
public func fkGaussianBlur(
    _ source: OpaquePointer?, _ kernelSize: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    guard let size = Filters.KernelSize(rawValue: Int(kernelSize)) else {
        return reporting(error) { throw InvalidArgument("kernel size \(kernelSize) (3 or 5)") }
    }
    return makeFrame(from: source, out: out, error: error) { pixels, result in
        try Filters.gaussianBlur(pixels, into: &result, size: size)
    }
}

@_cdecl("fk_sobel")
public func fkSobel(_ source: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?)
    -> fk_status
{
    makeFrame(from: source, out: out, error: error) { pixels, result in
        try Filters.sobelMagnitude(pixels, into: &result)
    }
}
