import FrameCore
import FramePixels

/// Stamps each frame's capture time into its picture, so that whatever shows the picture can
/// tell how old it is: the time from capture to the screen, measured where the screen is (the
/// preview page does, with `--stamp-capture-time`). The code is a row of 40 black or white
/// blocks along the top edge, each `width / 40` pixels square (at least 2): the capture time's
/// wall-clock milliseconds modulo 2³² (32 bits, most significant first), then the sum of
/// those four bytes modulo 256 (8 bits), so that a misread code is refused, not believed.
/// Flat blocks of that size survive JPEG and H.264 at the preview's quality.
public struct CaptureTimeStamp: Processor {
    public var name: String { "stamp" }
    public init() {}

    /// The blocks of the code, and the side of one in a `width`-wide picture.
    public static let blocks = 40
    public static func blockSide(width: Int) -> Int { max(2, (width / blocks) & ~1) }

    public func process(_ frame: inout SampleBuffer) throws {
        Self.stamp(UInt32(truncatingIfNeeded: frame.captureInstant.wallClockMilliseconds), on: &frame.pixelBuffer)
    }

    /// Writes `value`'s code along the top edge of `buffer`.
    public static func stamp(_ value: UInt32, on buffer: inout PixelBuffer) {
        let side = blockSide(width: buffer.width)
        guard buffer.height >= side, buffer.width >= side * blocks else { return }
        var white: [Rect] = []
        var black: [Rect] = []
        for (i, bit) in bits(of: value).enumerated() {
            let block = Rect(x: i * side, y: 0, width: side, height: side)
            if bit { white.append(block) } else { black.append(block) }
        }
        Annotation.fill(white, with: .white, on: &buffer)
        Annotation.fill(black, with: .black, on: &buffer)
    }

    /// The value stamped on `buffer`, or nil when its code does not check (no stamp, or damaged).
    public static func read(from buffer: PixelBuffer) -> UInt32? {
        let side = blockSide(width: buffer.width)
        guard buffer.height >= side, buffer.width >= side * blocks else { return nil }
        // The code's strip, as gray (any pixel format).
        let strip: PixelBuffer
        do {
            var gray = try PixelBuffer(width: side * blocks, height: side, format: .gray8)
            try ColorConversion.convertToGray(buffer.cropped(to: Rect(x: 0, y: 0, width: side * blocks, height: side)), into: &gray)
            strip = gray
        } catch { return nil }
        let read = strip.withUnsafeBytes(ofPlane: 0) { bytes, plane in
            (0..<blocks).map { i in bytes[(side / 2) * plane.bytesPerRow + i * side + side / 2] > 128 }
        }
        var value: UInt32 = 0
        for bit in read.prefix(32) { value = value << 1 | (bit ? 1 : 0) }
        var check: UInt8 = 0
        for bit in read.suffix(8) { check = check << 1 | (bit ? 1 : 0) }
        return check == checksum(value) ? value : nil
    }

    static func checksum(_ value: UInt32) -> UInt8 {
        UInt8(truncatingIfNeeded: (value >> 24) + (value >> 16 & 0xFF) + (value >> 8 & 0xFF) + (value & 0xFF))
    }

    static func bits(of value: UInt32) -> [Bool] {
        (0..<32).map { value >> (31 - $0) & 1 == 1 } + (0..<8).map { checksum(value) >> (7 - $0) & 1 == 1 }
    }
}
