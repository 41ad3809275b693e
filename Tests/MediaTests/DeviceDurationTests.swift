import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// `CaptureDevice.duration`: what a run's progress line estimates from (docs/capture.md).
@Suite("a file device's duration")
struct DeviceDurationTests {
    @Test("a video file's container, a Y4M's frames and a folder's images give a duration at their rate; MJPEG and cameras none")
    func durations() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = Fixtures.temporaryFolder()
        let source = ["-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-frames:v", "50", "-pix_fmt", "yuv420p"]
        let mp4 = folder.appendingPathComponent("clip.mp4")
        let y4m = folder.appendingPathComponent("clip.y4m")
        let mjpeg = folder.appendingPathComponent("clip.mjpeg")
        try FFmpegTool.run(source + [mp4.path])
        try FFmpegTool.run(source + ["-f", "yuv4mpegpipe", y4m.path])
        try FFmpegTool.run([
            "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-frames:v", "50", "-c:v", "mjpeg", "-f", "mjpeg", mjpeg.path
        ])
        let photos = folder.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        for name in ["a.jpg", "b.jpg", "c.jpg"] {
            try FileManager.default.copyItem(at: Fixtures.astronaut, to: photos.appendingPathComponent(name))
        }

        #expect(abs((try CaptureDevice.file(mp4).duration ?? 0) - 2.0) < 0.05)
        #expect(abs((try CaptureDevice.file(y4m).duration ?? 0) - 2.0) < 1e-9)
        // Images at the default 30 a second, or the rate asked for.
        #expect(abs((try CaptureDevice.file(photos).duration ?? 0) - 0.1) < 1e-9)
        #expect(abs((try CaptureDevice.file(photos, frameRate: 1).duration ?? 0) - 3) < 1e-9)
        #expect(try CaptureDevice.file(mjpeg).duration == nil)
        #expect(CaptureDevice.virtualCamera.duration == nil)
    }
}
