import CPNG
import FrameCore

/// PNG images through libpng (the CPNG shim): read as
/// `PixelFormat/rgb24` or `PixelFormat/gray8` — palettes and sub-byte depths expanded, 16-bit
/// reduced to 8, transparency composited onto white — and written from gray8, rgb24 or bgra32.
public enum PNG {
    /// The size and colour of PNG bytes, from their header alone.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var isGrayscale: Bool
    }

    /// Reads the header without decoding the pixels.
    public static func header(of bytes: [UInt8]) throws(ImageIOError) -> Header {
        var width: Int32 = 0
        var height: Int32 = 0
        var color: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let ok = bytes.withUnsafeBufferPointer { data in
            cpng_header(data.baseAddress, data.count, &width, &height, &color, &message, message.count)
        }
        guard ok == 1 else { throw .png(Self.text(message)) }
        return Header(width: Int(width), height: Int(height), isGrayscale: color == 0)
    }

    /// Decodes a PNG: a gray one as `PixelFormat/gray8`, any other as `PixelFormat/rgb24`. The
    /// size is checked against `PixelBuffer.pixelBudget` from the header, before the pixels'
    /// memory is allocated.
    public static func decode(_ bytes: [UInt8]) throws(ImageIOError) -> PixelBuffer {
        let header = try header(of: bytes)
        let format: PixelFormat = header.isGrayscale ? .gray8 : .rgb24
        var buffer: PixelBuffer
        do { buffer = try PixelBuffer(width: header.width, height: header.height, format: format) } catch {
            throw .pixelBuffer(error)
        }
        var message = [CChar](repeating: 0, count: 256)
        let ok = buffer.withUnsafeMutableBytes(ofPlane: 0) { out, plane in
            bytes.withUnsafeBufferPointer { data in
                cpng_decode(
                    data.baseAddress, data.count, header.isGrayscale ? CPNG_GRAY : CPNG_RGB, Int32(header.width),
                    Int32(header.height), out.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(plane.bytesPerRow), &message,
                    message.count)
            }
        }
        guard ok == 1 else { throw .png(Self.text(message)) }
        return buffer
    }

    /// Encodes a `PixelFormat/gray8`, `PixelFormat/rgb24` or `PixelFormat/bgra32` buffer
    /// (lossless; bgra32 keeps its alpha).
    public static func encode(_ buffer: PixelBuffer) throws(ImageIOError) -> [UInt8] {
        let layout: cpng_layout
        switch buffer.format {
        case .gray8: layout = CPNG_GRAY
        case .rgb24: layout = CPNG_RGB
        case .bgra32: layout = CPNG_BGRA
        default: throw .pixelBuffer(.unsupportedFormat(buffer.format, operation: "PNG encoding (gray8, rgb24 or bgra32)"))
        }
        var message = [CChar](repeating: 0, count: 256)
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        let ok = buffer.withUnsafeBytes(ofPlane: 0) { pixels, plane in
            cpng_encode(
                pixels.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buffer.width), Int32(buffer.height),
                Int32(plane.bytesPerRow), layout, &out, &size, &message, message.count)
        }
        guard ok == 1, let out else { throw .png(Self.text(message)) }
        defer { cpng_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// Whether the PNG in `bytes` is animated (an APNG: an `acTL` chunk before its first
    /// `IDAT`), as far as `bytes` go. libpng reads only its default image; FFmpeg reads every frame.
    public static func isAnimated(_ bytes: [UInt8]) -> Bool {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let kind = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            if kind == "acTL" { return true }
            if kind == "IDAT" { return false }
            guard length < Int(Int32.max) else { return false }
            offset += 12 + length
        }
        return false
    }

    /// Whether `bytes` start like a PNG (its 8-byte signature).
    public static func hasSignature(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    private static func text(_ message: [CChar]) -> String {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? "libpng failed" : text
    }
}
