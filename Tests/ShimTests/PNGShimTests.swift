import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// libpng through CPNG: FrameKit's PNGs read back by FFmpeg's own PNG decoder, FFmpeg's PNGs of
/// every common kind read by FrameKit, byte for byte; damaged and forged files as errors.
@Suite("libpng through CPNG")
struct PNGShimTests {
    /// The astronaut cut to an odd size (rows that are not a multiple of anything).
    static func photo() throws -> PixelBuffer {
        try PixelBuffer(contentsOf: Fixtures.astronaut).cropped(to: Rect(x: 3, y: 5, width: 301, height: 237)).copy()
    }

    /// `url` decoded by FFmpeg as raw `pixelFormat` bytes (its PNG decoder, not libpng).
    static func ffmpegPixels(_ url: URL, _ pixelFormat: String) throws -> [UInt8] {
        let raw = url.deletingPathExtension().appendingPathExtension("\(pixelFormat).raw")
        try FFmpegTool.run(["-i", url.path, "-f", "rawvideo", "-pix_fmt", pixelFormat, raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    @Test("gray8, rgb24 and bgra32 written as PNG are what FFmpeg reads back, and what FrameKit reads back, exactly")
    func written() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = Fixtures.temporaryFolder()
        let rgb = try Self.photo()
        var gray = try PixelBuffer(width: rgb.width, height: rgb.height, format: .gray8)
        try ColorConversion.convertToGray(rgb, into: &gray)
        let bgra = try PixelFormatConversion.convert(rgb, to: .bgra32)
        for (buffer, ffmpegFormat) in [(gray, "gray"), (rgb, "rgb24"), (bgra, "bgra")] {
            let url = folder.appendingPathComponent("\(buffer.format).png")
            try buffer.write(to: url)
            #expect(PNG.hasSignature(try ImageFile.read(url)))
            #expect(try Self.ffmpegPixels(url, ffmpegFormat) == buffer.packedBytes(), "\(buffer.format)")
            let back = try PixelBuffer(contentsOf: url)
            // Opaque BGRA comes back as RGB (no alpha to keep), every pixel the same.
            let expected = buffer.format == .bgra32 ? rgb : buffer
            #expect(back.format == expected.format && back.packedBytes() == expected.packedBytes(), "\(buffer.format)")
        }
        #expect(throws: ImageIOError.self) { try PNG.encode(try PixelBuffer(width: 4, height: 4, format: .i420)) }
    }

    @Test(
        "PNGs of every common kind made by FFmpeg decode to its own pixels: palette, 16-bit, gray, gray+alpha, RGBA",
        arguments: [
            ("pal8", "rgb24"), ("rgb48be", "rgb24"), ("gray", "gray"), ("gray16be", "gray"), ("rgb24", "rgb24"), ("ya8", "gray"),
            ("rgba", "rgb24")
        ])
    func decoded(pngFormat: String, readAs: String) throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = Fixtures.temporaryFolder()
        let url = folder.appendingPathComponent("\(pngFormat).png")
        // Opaque pictures (testsrc2 has no transparency): alpha makes no difference to the pixels.
        try FFmpegTool.run([
            "-f", "lavfi", "-i", "testsrc2=size=320x240", "-frames:v", "1", "-vf", "format=rgb24,crop=161:97:0:0", "-pix_fmt", pngFormat,
            url.path
        ])
        let image = try PixelBuffer(contentsOf: url)
        #expect(image.format == (readAs == "gray" ? .gray8 : .rgb24) && image.width == 161 && image.height == 97)
        let reference = try Self.ffmpegPixels(url, readAs)
        let differing = zip(image.packedBytes(), reference).filter { abs(Int($0) - Int($1)) > 1 }.count
        // 16-bit to 8: libpng rounds, FFmpeg truncates (at most 1 apart); 8-bit: identical.
        #expect(differing == 0 && image.packedBytes().count == reference.count, "\(differing) bytes differ by more than 1")
        if !pngFormat.contains("16") && !pngFormat.contains("48") { #expect(image.packedBytes() == reference) }
    }

    @Test("transparency is composited onto white: a fully transparent pixel reads white, an opaque one its colour")
    func alpha() throws {
        var bgra = try PixelBuffer(width: 2, height: 1, format: .bgra32)
        bgra.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in
            for (i, b) in [UInt8]([0, 0, 200, 0, 10, 20, 30, 255]).enumerated() { bytes[i] = b }
        }
        let rgb = try PNG.decode(try PNG.encode(bgra))
        #expect(rgb.packedBytes() == [255, 255, 255, 30, 20, 10])
    }

    @Test("damaged, truncated and forged PNGs are errors that say so, never a trap; a forged size is refused before its memory")
    func damaged() throws {
        let good = try PNG.encode(try Self.photo())
        let truncated = Array(good.prefix(good.count / 2))
        var flipped = good
        for i in stride(from: 200, to: flipped.count - 20, by: 97) { flipped[i] ^= 0x5A }
        for bytes in [truncated, flipped, Array(good.prefix(20)), Array(good.prefix(8)) + [UInt8](repeating: 0, count: 64)] {
            #expect(throws: ImageIOError.self) { try PNG.decode(bytes) }
        }
        // A header claiming 16000x16000 (the rest of a good file after it): the budget refuses
        // it from the header alone.
        var forged = good
        forged.replaceSubrange(16..<24, with: [0, 0, 0x3E, 0x80, 0, 0, 0x3E, 0x80])
        let crc = Self.crc32(Array(forged[12..<29]))
        forged.replaceSubrange(29..<33, with: [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)])
        let header = try PNG.header(of: forged)
        #expect(header.width == 16000 && header.height == 16000 && !header.isGrayscale)
        let error = try #require(throws: ImageIOError.self) { try PNG.decode(forged) }
        #expect("\(error)".contains("pixel budget"), "\(error)")
    }

    @Test("write(to:) of a PNG is complete or absent: no temporary file left beside it, an unwritable folder an error")
    func atomicWrite() throws {
        let folder = Fixtures.temporaryFolder()
        let url = folder.appendingPathComponent("shot.png")
        try Self.photo().write(to: url)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["shot.png"])
        #expect(throws: ImageIOError.self) { try Self.photo().write(to: folder.appendingPathComponent("missing/shot.png")) }
    }

    /// PNG's chunk CRC (ISO 3309), for the forged header.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test("an animated PNG is FFmpeg's (its apng demuxer reads every frame), not one still from libpng")
    func animated() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let url = Fixtures.temporaryFolder().appendingPathComponent("moving.png")
        try FFmpegTool.run(["-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-frames:v", "5", "-f", "apng", url.path])
        #expect(PNG.isAnimated(try ImageFile.read(url)))
        #expect(!PNG.isAnimated(try PNG.encode(try Self.photo())))
        let device = try CaptureDevice.file(url)
        #expect(device.modelID == "apng", "\(device.modelID)")
    }
}
