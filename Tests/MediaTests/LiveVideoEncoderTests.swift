import Foundation
import FrameKit
import FrameMedia
import FrameTestSupport
import Testing

/// The preview's H.264 stream (LiveVideoEncoder): what a browser is sent, read back by FFmpeg,
/// and what it costs against the MJPEG it replaces.
@Suite("The preview's H.264 encoder")
struct LiveVideoEncoderTests {
    /// `count` 640x480 NV12 frames 1/30 s apart: the virtual camera's picture, or a real
    /// photograph (gravel: fine texture, the hardest to compress) under a camera panning 2 px a
    /// frame.
    static func frames(_ scene: String, count: Int) throws -> [PixelBuffer] {
        if scene == "virtual" {
            let recorder = Recorder(keepPixels: true)
            let (session, _) = try makeSession(.virtualCamera, preset: .vga640x480, recorder: recorder, format: .nv12VideoRange)
            try session.startRunning()
            _ = recorder.wait(timeout: 30) { $0.frames.count >= count }
            session.stopRunning()
            return recorder.frames.prefix(count).map(\.pixelBuffer)
        }
        let photo = try JPEG.decode(
            ImageFile.read(Fixtures.packageRoot.appendingPathComponent("Benchmarks/Corpus/backgrounds/gravel.jpg")), to: .rgb24)
        var large = try PixelBuffer(width: 1024, height: 1024, format: .rgb24)
        try Resize.bilinear(photo, into: &large)
        return try (0..<count).map { i in
            try PixelFormatConversion.convert(large.cropped(to: Rect(x: 2 * i, y: i, width: 640, height: 480)), to: .nv12VideoRange)
        }
    }

    /// Luma PSNR of each decoded picture against its source.
    static func lumaPSNR(_ decoded: [PixelBuffer], _ sources: [PixelBuffer]) throws -> Double {
        var total = 0.0
        for (d, s) in zip(decoded, sources) {
            var a = try PixelBuffer(width: s.width, height: s.height, format: .gray8)
            var b = a
            try ColorConversion.convertToGray(d, into: &a)
            try ColorConversion.convertToGray(s, into: &b)
            total += Fixtures.psnr(a, b)
        }
        return total / Double(min(decoded.count, sources.count))
    }

    /// The stream of `sources` (init segment, then every fragment), key frames where `keys` says.
    static func encode(_ sources: [PixelBuffer], keys: Set<Int> = []) throws -> (bytes: [UInt8], keyFrames: [Int], codec: String) {
        let encoder = try LiveVideoEncoder(
            size: FrameSize(width: 640, height: 480), frameRate: 30,
            bitrate: PreviewFeed.defaultVideoBitrate(for: FrameSize(width: 640, height: 480)))
        var bytes = encoder.initSegment
        var keyFrames: [Int] = []
        for (i, frame) in sources.enumerated() {
            let fragment = try #require(try encoder.encode(frame, forceKey: keys.contains(i)))
            if fragment.isKey { keyFrames.append(i) }
            bytes += fragment.bytes
        }
        return (bytes, keyFrames, encoder.codec)
    }

    /// The stream's pictures as FFmpeg decodes them, in NV12.
    static func decode(_ stream: [UInt8], count: Int) throws -> [PixelBuffer] {
        let folder = Fixtures.temporaryFolder()
        let file = folder.appendingPathComponent("stream.mp4")
        try Data(stream).write(to: file)
        let raw = folder.appendingPathComponent("frames.nv12")
        _ = try FFmpegTool.run(["-i", file.path, "-f", "rawvideo", "-pix_fmt", "nv12", raw.path])
        let bytes = [UInt8](try Data(contentsOf: raw))
        let frameBytes = 640 * 480 * 3 / 2
        return try (0..<min(count, bytes.count / frameBytes)).map { i in
            try PixelBuffer(
                width: 640, height: 480, format: .nv12VideoRange, packedBytes: Array(bytes[(i * frameBytes)..<((i + 1) * frameBytes)]))
        }
    }

    @Test("a fragment a frame that FFmpeg decodes frame for frame; a key frame a second and where asked; the codec string is the stream's")
    func fragments() throws {
        try #require(FFmpegTool.isInstalled)
        let sources = try Self.frames("photo", count: 75)
        let (stream, keys, codec) = try Self.encode(sources, keys: [40])
        #expect(keys == [0, 30, 40, 70], "\(keys)") // the GOP restarts at a forced key frame
        #expect(codec.hasPrefix("avc1.") && codec.count == 11, "\(codec)")
        let file = Fixtures.temporaryFolder().appendingPathComponent("stream.mp4")
        try Data(stream).write(to: file)
        let probe = try FFmpegTool.probe(file)
        #expect(
            probe.codec == "h264" && probe.width == 640 && probe.height == 480 && probe.frames == 75 && probe.errors.isEmpty, "\(probe)")
        #expect(abs(probe.duration - 2.5) < 0.1, "\(probe)")
        // Decoded pictures are the frames sent, in order (not a frame's neighbour).
        let decoded = try Self.decode(stream, count: 75)
        #expect(decoded.count == 75)
        let own = try Self.lumaPSNR([decoded[50]], [sources[50]])
        let neighbour = try Self.lumaPSNR([decoded[50]], [sources[45]])
        #expect(own > neighbour + 3, "frame 50: \(own) dB against itself, \(neighbour) against frame 45")
    }

    @Test(
        "the stream's timeline advances a frame duration a frame (no gap for a browser to drop frames at), and each fragment's time is the one in the file"
    )
    func timeline() throws {
        try #require(FFmpegTool.isInstalled)
        let sources = try Self.frames("photo", count: 12)
        let encoder = try LiveVideoEncoder(size: FrameSize(width: 640, height: 480), frameRate: 30, bitrate: 1_000_000)
        var stream = encoder.initSegment
        var reported: [Double] = []
        for (i, frame) in sources.enumerated() {
            let fragment = try #require(try encoder.encode(frame, forceKey: i == 7))
            reported.append(fragment.time)
            stream += fragment.bytes
        }
        let file = Fixtures.temporaryFolder().appendingPathComponent("stream.mp4")
        try Data(stream).write(to: file)
        let probe = try BinaryRunner.runTool(
            "/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", file.path])
        #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr.prefix(300))")
        let inFile = probe.stdout.split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        #expect(inFile.count == sources.count, "\(inFile)")
        for (i, (time, said)) in zip(inFile, reported).enumerated() {
            #expect(abs(time - Double(i) / 30) < 0.001 && abs(said - time) < 0.001, "frame \(i): \(time) s in the file, \(said) reported")
        }
    }

    @Test("a frame of another size is refused with a message, not encoded")
    func wrongSize() throws {
        let encoder = try LiveVideoEncoder(size: FrameSize(width: 640, height: 480), frameRate: 30, bitrate: 1_000_000)
        let small = try PixelBuffer(width: 320, height: 240, format: .nv12VideoRange)
        #expect(throws: LiveVideoEncoder.Failure.self) { try encoder.encode(small, forceKey: false) }
        #expect(throws: LiveVideoEncoder.Failure.self) {
            try LiveVideoEncoder(size: FrameSize(width: 641, height: 480), frameRate: 30, bitrate: 1_000_000)
        }
    }

    @Test(
        "at the default cap against JPEG at the preview's quality (75): at most an eighth of the bytes at a PSNR within 2 dB (printed)",
        arguments: ["virtual", "photo"])
    func againstMJPEG(scene: String) throws {
        try #require(FFmpegTool.isInstalled)
        let sources = try Self.frames(scene, count: 60)
        let (stream, _, _) = try Self.encode(sources)
        let decoded = try Self.decode(stream, count: 60)
        let encoder = try JPEG.Encoder()
        var jpegBytes = 0
        var jpegPictures: [PixelBuffer] = []
        for frame in sources {
            let jpeg = try encoder.encode(frame, quality: 75)
            jpegBytes += jpeg.count
            jpegPictures.append(try JPEG.decode(jpeg, to: .nv12VideoRange))
        }
        let h264PSNR = try Self.lumaPSNR(decoded, sources)
        let jpegPSNR = try Self.lumaPSNR(jpegPictures, sources)
        let ratio = Double(jpegBytes) / Double(stream.count)
        print(
            "live H.264 vs MJPEG (\(scene), 640x480, 60 frames): H.264 \(stream.count * 30 / 60) B/s at \(String(format: "%.1f", h264PSNR)) dB, "
                + "JPEG q75 \(jpegBytes * 30 / 60) B/s at \(String(format: "%.1f", jpegPSNR)) dB: \(String(format: "%.1f", ratio))x fewer bytes"
        )
        #expect(decoded.count == 60)
        // #33's bar: at most an eighth of MJPEG's bytes, at a PSNR within 2 dB of the JPEG's.
        #expect(ratio >= 8, "H.264 \(stream.count) bytes, MJPEG \(jpegBytes)")
        #expect(h264PSNR >= jpegPSNR - 2, "H.264 \(h264PSNR) dB, JPEG \(jpegPSNR) dB")
    }
}
