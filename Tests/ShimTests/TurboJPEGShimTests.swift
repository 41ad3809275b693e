import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("libjpeg-turbo through CTurboJPEG")
struct TurboJPEGShimTests {
    @Test("a real photo survives encode → decode with PSNR above 35 dB")
    func roundTrip() throws {
        let original = try PixelBuffer(contentsOf: Fixtures.astronaut)
        #expect(original.width == 512 && original.height == 512 && original.format == .rgb24)
        let encoded = try JPEG.encode(original, quality: 95)
        #expect(JPEG.hasSignature(encoded))
        let decoded = try JPEG.decode(encoded, to: .rgb24)
        let psnr = Fixtures.psnr(original, decoded)
        #expect(psnr > 35, "PSNR \(psnr) dB")
        // A low quality must cost fidelity: the measurement is not vacuous.
        let poor = try JPEG.decode(JPEG.encode(original, quality: 5), to: .rgb24)
        #expect(Fixtures.psnr(original, poor) < psnr - 5)
    }

    @Test("Y'CbCr formats decode and encode through planes", arguments: [PixelFormat.nv12VideoRange, .nv12FullRange, .i420, .yuyv])
    func planarRoundTrip(format: PixelFormat) throws {
        let bytes = try ImageFile.read(Fixtures.astronaut)
        let yuv = try JPEG.decode(bytes, to: format)
        #expect(yuv.format == format)
        let gray = try JPEG.decode(bytes, to: .gray8)
        var luma = try PixelBuffer(width: 512, height: 512, format: .gray8)
        try ColorConversion.convertToGray(yuv, into: &luma)
        if format == .nv12FullRange {
            #expect(Fixtures.psnr(gray, luma) > 45) // same full-range luma
        }
        let again = try JPEG.decode(JPEG.encode(yuv, quality: 95), to: .rgb24)
        #expect(Fixtures.psnr(try PixelBuffer(contentsOf: Fixtures.astronaut), again) > 33)
    }

    @Test("one encoder reused across formats and sizes writes what a fresh encoder writes, byte for byte")
    func reusedEncoder() throws {
        let bytes = try ImageFile.read(Fixtures.astronaut)
        let nv12 = try JPEG.decode(bytes, to: .nv12VideoRange)
        let gray = try JPEG.decode(bytes, to: .gray8)
        let yuyv = try JPEG.decode(bytes, to: .yuyv)
        let rgb = try JPEG.decode(bytes, to: .rgb24)
        var smallRGB = try PixelBuffer(width: 128, height: 96, format: .rgb24)
        try Resize.bilinear(rgb, into: &smallRGB)
        let small = try JPEG.decode(JPEG.encode(smallRGB, quality: 95), to: .nv12VideoRange)
        var large = try PixelBuffer(width: 1024, height: 1024, format: .rgb24)
        try Resize.bilinear(rgb, into: &large)
        // A sequence that shrinks, grows and changes subsampling: the kept planes and output
        // buffer must never leak one frame's bytes into the next.
        let sequence = [nv12, small, gray, yuyv, large, nv12, gray, small, rgb]
        let encoder = try JPEG.Encoder()
        for (i, buffer) in sequence.enumerated() {
            let reused = try encoder.encode(buffer, quality: 80)
            let fresh = try JPEG.Encoder().encode(buffer, quality: 80)
            #expect(reused == fresh, "frame \(i): \(buffer.format) \(buffer.width)x\(buffer.height)")
        }
    }

    @Test(
        "one decoder reused across sizes, subsamplings, grayscale and a damaged frame decodes what a fresh decoder decodes, byte for byte, into every Y'CbCr format"
    )
    func reusedDecoder() throws {
        let bytes = try ImageFile.read(Fixtures.astronaut)
        let rgb = try JPEG.decode(bytes, to: .rgb24)
        func shrunk(_ width: Int, _ height: Int) throws -> PixelBuffer {
            var out = try PixelBuffer(width: width, height: height, format: .rgb24)
            try Resize.bilinear(rgb, into: &out)
            return out
        }
        let tiny = try shrunk(2, 2)
        var tinyGray = try PixelBuffer(width: 2, height: 2, format: .gray8)
        try ColorConversion.convertToGray(tiny, into: &tinyGray)
        // 4:2:0 (from NV12), 4:2:2 (from YUYV), grayscale, and sizes that shrink and grow; a
        // 2x2 colour image's 1x1 chroma, then a 2x2 grayscale one's.
        let files: [[UInt8]] = [
            bytes,
            try JPEG.encode(JPEG.decode(bytes, to: .yuyv), quality: 90),
            try JPEG.encode(JPEG.decode(bytes, to: .gray8), quality: 90),
            try JPEG.encode(try shrunk(130, 66), quality: 90),
            try JPEG.encode(tiny, quality: 90),
            try JPEG.encode(tinyGray, quality: 90),
            Array(bytes.prefix(bytes.count / 3)), // damaged: an error, and the next frame is right
            try JPEG.encode(JPEG.decode(bytes, to: .nv12VideoRange), quality: 90),
            bytes
        ]
        let decoder = try JPEG.Decoder()
        for format in [PixelFormat.nv12VideoRange, .nv12FullRange, .i420, .yuyv] {
            for (i, file) in files.enumerated() {
                let (reused, fresh) = file.withUnsafeBytes { data in
                    (try? decoder.decode(data, to: format), try? JPEG.Decoder().decode(data, to: format))
                }
                #expect(reused?.packedBytes() == fresh?.packedBytes(), "file \(i) to \(format)")
                #expect((reused == nil) == (i == 6), "file \(i) to \(format): decoded \(reused != nil)")
            }
        }
    }

    @Test("truncated and corrupt JPEG data is a thrown error, never a crash")
    func damagedData() throws {
        let bytes = try ImageFile.read(Fixtures.astronaut)
        #expect(throws: ImageIOError.self) { try JPEG.decode(Array(bytes.prefix(bytes.count / 2))) }
        #expect(throws: ImageIOError.self) { try JPEG.decode(Array(bytes.prefix(10))) }
        #expect(throws: ImageIOError.self) { try JPEG.decode([0xFF, 0xD8, 0xFF]) }
        #expect(throws: ImageIOError.self) { try JPEG.decode([]) }
        var scrambled = bytes
        for i in stride(from: 2000, to: 6000, by: 7) { scrambled[i] ^= 0x5A }
        #expect(throws: ImageIOError.self) { try JPEG.decode(scrambled) }
        // A JPEG header followed by garbage: a JPEG error, not "invalid size 0x0 for RGB24".
        let garbage: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF\0garbagegarbagegarbage".utf8)
        let error = try #require(throws: ImageIOError.self) { try JPEG.decode(garbage) }
        #expect(error.description.contains("JPEG") && !error.description.contains("0x0"), "\(error)")
    }

    @Test("a plane the format does not have is empty, not a trap")
    func missingPlane() throws {
        let gray = try PixelBuffer(width: 8, height: 4, format: .gray8)
        #expect(gray.plane(1).byteSpan == 0 && gray.plane(2).width == 0 && gray.plane(-1).height == 0)
        #expect(gray.withUnsafeBytes(ofPlane: 1) { bytes, _ in bytes.count } == 0)
        let nv12 = try PixelBuffer(width: 8, height: 4, format: .nv12FullRange)
        #expect(nv12.plane(1).byteSpan == 8 * 2 && nv12.plane(2).byteSpan == 0)
    }

    @Test("PGM reads and writes back byte for byte")
    func pnm() throws {
        let gray = try PixelBuffer(contentsOf: Fixtures.astronautGray)
        #expect(gray.format == .gray8 && gray.width == 256)
        let again = try PNM.decode(PNM.encode(gray))
        #expect(again.packedBytes() == gray.packedBytes())
        #expect(throws: ImageIOError.self) { try PNM.decode(Array(PNM.encode(gray).dropLast(100))) }
        #expect(throws: ImageIOError.self) { try PixelBuffer(contentsOf: URL(fileURLWithPath: "/nonexistent.jpg")) }
    }
}
