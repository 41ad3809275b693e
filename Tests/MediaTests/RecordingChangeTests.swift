import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// Recordings that tell the truth when the session changes under them: a size change ends the
/// recording with a complete file (AVFoundation's sessionConfigurationChanged), and an H.264 file
/// lasts as long as was recorded whatever was dropped.
@Suite("Recordings across a size change, and their duration with drops", .serialized)
struct RecordingChangeTests {
    static let changes: [(String, SessionPreset, SessionPreset)] = [
        ("mp4", .hd1280x720, .cif352x288), ("mov", .vga640x480, .hd1280x720), ("avi", .hd1280x720, .vga640x480),
        ("mp4", .cif352x288, .vga640x480)
    ]

    @Test(
        "a preset changed while recording (smaller or larger) ends the recording with sessionConfigurationChanged; the file plays, every frame at the old size",
        arguments: changes.indices)
    func sizeChange(index: Int) throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg (ffprobe)")
        let (container, from, to) = Self.changes[index]
        let url = Fixtures.temporaryFolder().appendingPathComponent("change.\(container)")
        let movie = MovieFileOutput()
        let session = try virtualSession(preset: from, outputs: [movie])
        try session.startRunning()
        defer { session.stopRunning() }
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        try #require(eventually { movie.counts.delivered >= 10 }, "frames reached the recording")
        try session.configure { try session.setSessionPreset(to) }
        let (done, frames, error) = try #require(waiter.wait(), "the recording ended by itself")
        guard case .sessionConfigurationChanged? = error else {
            Issue.record("ended by \(String(describing: error)), not sessionConfigurationChanged")
            return
        }
        let size = try #require(from.resolve(among: CaptureDevice.virtualCamera.supportedSizes))
        let probed = try FFmpegTool.probe(done)
        #expect(probed.width == size.width && probed.height == size.height, "\(probed)")
        #expect(frames >= 10 && probed.frames == frames, "\(frames) frames reported, \(probed)")
    }

    @Test("an AVI keeps time across dropped frames: the gaps are empty chunks, ffprobe's duration is the recording's, every JPEG decodes")
    func aviGapsKeepTime() throws {
        try #require(FFmpegTool.isInstalled)
        let url = Fixtures.temporaryFolder().appendingPathComponent("gaps.avi")
        let writer = try MJPEGMovieWriter(path: url.path, fileDescriptor: MovieFile.reserve(url), quality: 80)
        try writer.prepare(width: 64, height: 48, frameRate: 30)
        let jpeg = try JPEG.encode(try PixelBuffer(width: 64, height: 48, format: .gray8), quality: 80)
        // Frames 0, 1, 2, then 10 and 11 (7 dropped), then one whose slot is taken (a camera
        // faster than the file's one rate): left out, so the file keeps time.
        for time in [0, 1, 2, 10, 11, 11].map({ Double($0) / 30 }) { #expect(try writer.write(jpeg: jpeg, at: time, maxBytes: nil)) }
        try writer.close()
        #expect(writer.frameCount == 5)
        let probed = try FFmpegTool.probe(url)
        // 12 slots at 30 fps (0…11): the frames played where they were recorded, not 5 in a row.
        #expect(abs(probed.duration - 12.0 / 30) < 0.01, "\(probed)")
        #expect(probed.frames >= 5, "\(probed)")
        // OpenCV through FFmpeg decodes the 5 JPEGs and skips the empty chunks; OpenCV's own MJPEG
        // reader shows the last picture again for each (12), as players do.
        let viaFFmpeg = try OpenCV.probeVideo(url.path)
        #expect(viaFFmpeg.decodedFrames == 5 && viaFFmpeg.headerFrames == 12 && viaFFmpeg.width == 64, "\(viaFFmpeg)")
        let own = try OpenCV.probeVideo(url.path, ownMJPEGReader: true)
        #expect(own.decodedFrames == 12 && own.headerFrames == 12, "\(own)")
    }

    @Test(
        "an H.264 recording whose writer drops frames (a slow disk) lasts as long as it recorded: 2.0 s by ffprobe, not the frames at 30 fps"
    )
    func durationWithDrops() throws {
        try #require(FFmpegTool.isInstalled)
        let url = Fixtures.temporaryFolder().appendingPathComponent("drops.mp4")
        let movie = MovieFileOutput()
        movie.maxRecordedDuration = 2
        movie.beforeWrite = { Thread.sleep(forTimeInterval: 0.08) } // a disk that takes 80 ms a frame
        let session = try virtualSession(preset: .cif352x288, outputs: [movie])
        try session.startRunning()
        defer { session.stopRunning() }
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        let (_, frames, error) = try #require(waiter.wait())
        guard case .maximumDurationReached? = error else {
            Issue.record("ended by \(String(describing: error))")
            return
        }
        let probed = try FFmpegTool.probe(url)
        #expect(frames < 45 && movie.counts.droppedTotal > 10, "\(frames) frames, \(movie.counts): the test needs drops")
        #expect(probed.frames == frames && abs(probed.duration - 2.0) < 0.15, "\(probed) for \(frames) frames")
    }

    @Test(
        "a camera switched from 15 to 30 fps while recording: the recording goes on, and lasts as long as it recorded (3.0 s by ffprobe), with frames at both rates",
        arguments: ["mp4", "avi"])
    func frameRateChange(container: String) throws {
        try #require(FFmpegTool.isInstalled)
        let url = Fixtures.temporaryFolder().appendingPathComponent("rates.\(container)")
        // A camera of its own: the shared virtual camera's rate is other tests' too.
        let camera = CaptureDevice.makeVirtualCamera(uniqueID: "virtual:rates", name: "Rates")
        try camera.setActiveVideoMinFrameDuration(1.0 / 15)
        let movie = MovieFileOutput()
        movie.maxRecordedDuration = 3
        let session = try session(try CaptureDeviceInput(device: camera), preset: .cif352x288, outputs: [movie])
        try session.startRunning()
        defer { session.stopRunning() }
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        Thread.sleep(forTimeInterval: 1.5)
        try camera.setActiveVideoMinFrameDuration(1.0 / 30)
        try session.configure {} // the new rate applies at the commit
        let (_, frames, error) = try #require(waiter.wait())
        guard case .maximumDurationReached? = error else {
            Issue.record("ended by \(String(describing: error))")
            return
        }
        let probed = try FFmpegTool.probe(url)
        if container == "mp4" {
            // ~22 frames at 15 fps, then ~45 at 30: more than 15 fps alone would give, fewer than 30.
            #expect(frames > 50 && frames < 90, "\(frames) frames")
        } else {
            // AVI has one rate, the one it started with: the faster frames that would share a
            // slot are left out (it played them at the old rate: 4.5 s for 3).
            #expect(frames >= 40 && frames <= 47, "\(frames) frames")
        }
        // A camera switched to 30 fps once played at half speed after the switch.
        #expect(abs(probed.duration - 3.0) <= 0.15, "\(probed) for \(frames) frames")
    }

    @Test(
        "a camera swapped while recording for a source of the same size in another pixel format (NV12 → I420): the recording goes on, the new frames converted — colours right, not planes misread"
    )
    func pixelFormatChange() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        let url = folder.appendingPathComponent("formats.mp4")
        // 640x480 I420 whose pixels are known: luma a ramp, chroma one flat Cb and Cr per frame.
        let clip = folder.appendingPathComponent("i420.y4m")
        try Y4MWriter.write(frames: 60, width: 640, height: 480, to: clip)
        let file = try CaptureDeviceInput(device: try CaptureDevice.file(clip, realTime: true))
        let camera = try CaptureDeviceInput(device: CaptureDevice.makeVirtualCamera(uniqueID: "virtual:formats", name: "Formats"))
        let movie = MovieFileOutput()
        movie.maxRecordedDuration = 2
        let session = try session(camera, preset: .vga640x480, outputs: [movie])
        try session.startRunning()
        defer { session.stopRunning() }
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        try #require(eventually { movie.counts.delivered >= 15 }, "frames reached the recording")
        try session.configure {
            session.removeInput(camera)
            try session.addInput(file)
        }
        let (_, frames, error) = try #require(waiter.wait())
        guard case .maximumDurationReached? = error else {
            Issue.record("ended by \(String(describing: error))")
            return
        }
        let probed = try FFmpegTool.probe(url)
        #expect(probed.width == 640 && probed.height == 480 && abs(probed.duration - 2) <= 0.15, "\(probed), \(frames) frames")
        // The last frame is the clip's: find which, and compare every plane with it. Planes
        // misread (I420's as NV12's interleaved chroma) give stripes of Cb and Cr.
        let raw = folder.appendingPathComponent("formats.yuv")
        try FFmpegTool.run(["-i", url.path, "-f", "rawvideo", "-pix_fmt", "yuv420p", raw.path])
        let bytes = [UInt8](try Data(contentsOf: raw))
        let frameBytes = 640 * 480 * 3 / 2
        let last = Array(bytes[(bytes.count - frameBytes)...])
        func difference(_ f: Int) -> (luma: Double, chroma: Double) {
            var luma = 0
            var lumaCount = 0
            for y in stride(from: 8, to: 472, by: 4) {
                for x in stride(from: 8, to: 632, by: 4) {
                    luma += abs(Int(last[y * 640 + x]) - Int(Y4MWriter.luma(frame: f, x: x, y: y)))
                    lumaCount += 1
                }
            }
            var chroma = 0
            let quarter = 320 * 240
            for i in stride(from: 0, to: quarter, by: 7) {
                chroma += abs(Int(last[640 * 480 + i]) - Int(Y4MWriter.cb(frame: f)))
                chroma += abs(Int(last[640 * 480 + quarter + i]) - Int(Y4MWriter.cr(frame: f)))
            }
            return (Double(luma) / Double(lumaCount), Double(chroma) / Double(2 * ((quarter + 6) / 7)))
        }
        let best = (0..<60).map { difference($0) }.min { $0.luma + $0.chroma < $1.luma + $1.chroma }!
        #expect(best.luma < 10 && best.chroma < 4, "the last frame against the clip's closest: \(best)")
    }
}
