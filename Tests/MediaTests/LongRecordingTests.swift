import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("Hours-long recordings: Motion-JPEG AVI past 1 and 4 GiB (OpenDML through libavformat)")
struct LongRecordingTests {
    @Test("an AVI of 4.3 GB: every frame read back by ffprobe and by OpenCV through FFmpeg; OpenCV's own MJPEG reader reads its first GiB")
    func pastFourGiB() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg")
        // 1080p noise at quality 100 does not compress: about 6 MB a frame, written as is.
        var generator = SeededGenerator(seed: 4)
        var noise = try PixelBuffer(width: 1920, height: 1080, format: .rgb24)
        noise.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in
            for i in 0..<bytes.count { bytes[i] = UInt8.random(in: 0...255, using: &generator) }
        }
        let jpeg = try JPEG.encode(noise, quality: 100)
        let url = Fixtures.temporaryFolder("long-recording").appendingPathComponent("long.avi")
        defer { try? FileManager.default.removeItem(at: url) }
        let writer = try MJPEGMovieWriter(path: url.path, fileDescriptor: MovieFile.reserve(url), quality: 90)
        try writer.prepare(width: 1920, height: 1080, frameRate: 30)
        let target = 4_300_000_000 // past 2^32 = 4,294,967,296
        while writer.bytesWritten < target { #expect(try writer.write(jpeg: jpeg, maxBytes: nil)) }
        try writer.close()
        let frames = writer.frameCount
        let size = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
        #expect(size > 4_294_967_296, "the file is \(size) bytes")
        // FFmpeg reads it through (an OpenDML file: RIFF-AVIX chunks after the first RIFF-AVI).
        let head = try FileHandle(forReadingFrom: url)
        defer { try? head.close() }
        try head.seek(toOffset: UInt64(1 << 30) + 4096)
        let tail = try head.read(upToCount: 64 << 20) ?? Data()
        #expect(tail.range(of: Data("AVIX".utf8)) != nil, "no RIFF-AVIX chunk after the first gigabyte")
        _ = try FFmpegTool.run(["-i", url.path, "-map", "0:v", "-c", "copy", "-f", "null", "-"], timeout: 300)
        let counted = try BinaryRunner.runTool(
            "/usr/bin/ffprobe",
            [
                "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries", "stream=nb_read_packets,width,height",
                "-of", "csv=p=0", url.path
            ])
        #expect(
            counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1920,1080,\(frames)",
            "ffprobe: \(counted.stdout) \(counted.stderr)")
        let viaFFmpeg = try OpenCV.probeVideo(url.path)
        #expect(viaFFmpeg.decodedFrames == frames && viaFFmpeg.width == 1920)
        // OpenCV 4.6's own reader follows the legacy idx1, which covers the first RIFF (1 GiB);
        // it does not read OpenDML's RIFF-AVIX chunks. What it reads must be whole frames.
        let ownReader = try OpenCV.probeVideo(url.path, ownMJPEGReader: true)
        #expect(
            ownReader.decodedFrames * jpeg.count >= 1_000_000_000 && ownReader.decodedFrames < frames,
            "\(ownReader.decodedFrames) of \(frames)")
    }
}
