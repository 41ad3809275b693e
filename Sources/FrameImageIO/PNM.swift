import FrameCore

/// Netpbm images: binary PGM (P5, gray) and PPM (P6, RGB), 8-bit.
public enum PNM {
    /// Decodes P5 into `PixelFormat/gray8` or P6 into `PixelFormat/rgb24`.
    public static func decode(_ bytes: [UInt8]) throws(ImageIOError) -> PixelBuffer {
        var cursor = 0
        func skipSpaceAndComments() {
            while cursor < bytes.count {
                if bytes[cursor] == UInt8(ascii: "#") {
                    while cursor < bytes.count, bytes[cursor] != 0x0A { cursor += 1 }
                } else if [0x20, 0x09, 0x0A, 0x0D].contains(bytes[cursor]) {
                    cursor += 1
                } else {
                    return
                }
            }
        }
        func number(_ what: String) throws(ImageIOError) -> Int {
            skipSpaceAndComments()
            var value = 0
            var digits = 0
            while cursor < bytes.count, (48...57).contains(bytes[cursor]) {
                value = value * 10 + Int(bytes[cursor] - 48)
                guard value <= 1 << 20 else { throw .malformedPNM("\(what) is too large") }
                cursor += 1
                digits += 1
            }
            guard digits > 0 else { throw .malformedPNM("missing \(what)") }
            return value
        }
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "5") || bytes[1] == UInt8(ascii: "6") else {
            throw .malformedPNM("not a binary PGM (P5) or PPM (P6)")
        }
        let format: PixelFormat = bytes[1] == UInt8(ascii: "5") ? .gray8 : .rgb24
        cursor = 2
        let width = try number("width")
        let height = try number("height")
        let maxValue = try number("maxval")
        guard maxValue == 255 else { throw .malformedPNM("maxval \(maxValue): only 8-bit (255) images are read") }
        guard cursor < bytes.count else { throw .malformedPNM("truncated header") }
        cursor += 1 // the single whitespace byte before the raster
        let needed = format.byteCount(width: width, height: height)
        guard bytes.count - cursor >= needed else {
            throw .malformedPNM("truncated: \(width)x\(height) needs \(needed) bytes of pixels, found \(bytes.count - cursor)")
        }
        do {
            return try PixelBuffer(
                width: width, height: height, format: format,
                packedBytes: Array(bytes[cursor..<cursor + needed]))
        } catch { throw .pixelBuffer(error) }
    }

    /// Encodes a `PixelFormat/gray8` buffer as P5 or an `PixelFormat/rgb24` one as P6.
    public static func encode(_ buffer: PixelBuffer) throws(ImageIOError) -> [UInt8] {
        let magic: String
        switch buffer.format {
        case .gray8: magic = "P5"
        case .rgb24: magic = "P6"
        default: throw .pixelBuffer(.unsupportedFormat(buffer.format, operation: "PNM encoding (gray8 or rgb24)"))
        }
        return Array("\(magic)\n\(buffer.width) \(buffer.height)\n255\n".utf8) + buffer.packedBytes()
    }

    public static func hasSignature(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.makeIterator()
        guard i.next() == UInt8(ascii: "P"), let kind = i.next() else { return false }
        return kind == UInt8(ascii: "5") || kind == UInt8(ascii: "6")
    }
}
