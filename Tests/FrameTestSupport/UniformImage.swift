import FrameKit

extension PixelBuffer {
    /// A gray image of one level throughout: the simplest frame a test can tell from another.
    public static func uniformGray(width: Int, height: Int, level: UInt8) throws -> PixelBuffer {
        var image = try PixelBuffer(width: width, height: height, format: .gray8)
        image.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in
            for i in bytes.indices { bytes[i] = level }
        }
        return image
    }
}
