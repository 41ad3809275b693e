import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// H.264 recordings in MP4 and MOV (#16), read back by ffprobe, OpenCV and FrameKit itself.
@Suite("H.264 recordings (MP4, MOV)", .serialized)
struct H264RecordingTests {
    @Test("a recording to .mp4 or .mov is H.264 that ffprobe, OpenCV and FrameKit read back frame for frame", arguments: ["mp4", "mov"])
    func roundTrip(container: String) throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg (ffprobe)")
        let url = Fixtures.temporaryFolder().appendingPathComponent("clip.\(container)")
        let movie = MovieFileOutput()
        let session = try virtualSession(outputs: [movie])
        try session.startRunning()
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        try #require(eventually { movie.counts.delivered >= 45 }, "frames reached the recording")
        movie.stopRecording()
        let (done, frames, error) = try #require(waiter.wait())
        session.stopRunning()
        #expect(done == url && error == nil && frames >= 45, "\(String(describing: error))")
        let probed = try FFmpegTool.probe(url)
        #expect(probed.codec == "h264" && probed.width == 352 && probed.height == 288 && probed.frames == frames, "\(probed)")
        let opencv = try OpenCV.probeVideo(url.path)
        #expect(opencv.decodedFrames == frames && opencv.width == 352, "\(opencv)")
        let recorder = Recorder()
        let (back, output) = try makeSession(try CaptureDevice.file(url), preset: .high, recorder: recorder)
        let log = NotificationLog(back)
        try back.startRunning()
        _ = log.wait(timeout: 20) { if case .sourceEnded = $0 { true } else { false } }
        back.stopRunning()
        #expect(recorder.frames.count == frames && output.counts.droppedTotal == 0)
        // The timeline starts where the container says (B-frames delay it); frames are 1/30 s
        // apart, more where the recording dropped one (a busy machine): the file keeps the
        // frames' own times.
        let span = (recorder.frames.last?.presentationTime ?? 0) - (recorder.frames.first?.presentationTime ?? 0)
        let gaps = Double(movie.counts.droppedTotal)
        #expect(
            span > Double(frames - 1) / 30 - 0.01 && span < Double(frames - 1) / 30 + gaps / 30 + 0.01, "\(span) s for \(frames) frames")
    }

    @Test("H.264 settings out of range are typed errors; the file-size limit ends an MP4 below it, still playable")
    func settingsAndLimit() throws {
        try #require(FFmpegTool.isInstalled)
        let movie = MovieFileOutput()
        var bad = MovieFileOutput.H264Settings()
        bad.crf = 60
        #expect(throws: CaptureError.self) { try movie.setH264Settings(bad) }
        bad = .init()
        bad.preset = "warp9"
        #expect(throws: CaptureError.self) { try movie.setH264Settings(bad) }
        var fine = MovieFileOutput.H264Settings()
        fine.crf = 18
        fine.keyframeInterval = 0.5
        try movie.setH264Settings(fine)
        movie.maxRecordedFileSize = 150_000
        guard let (url, frames, size) = try recordToLimit(movie, named: "limited.mp4", preset: .cif352x288) else { return }
        #expect(size <= 150_000 && frames > 0, "\(size) bytes, \(frames) frames")
        #expect(try FFmpegTool.probe(url).frames == frames)
    }

    /// Records from the virtual camera until `movie`'s file-size limit ends the recording: the
    /// file, its frames and bytes; nil (an issue recorded) if anything else ended it.
    func recordToLimit(_ movie: MovieFileOutput, named name: String, preset: SessionPreset) throws -> (URL, Int, Int)? {
        let limit = try #require(movie.maxRecordedFileSize)
        let url = Fixtures.temporaryFolder().appendingPathComponent(name)
        let session = try virtualSession(preset: preset, outputs: [movie])
        try session.startRunning()
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        let (_, frames, error) = try #require(waiter.wait())
        session.stopRunning()
        guard case .maximumFileSizeReached(let reached)? = error, reached == limit else {
            Issue.record("ended with \(String(describing: error))")
            return nil
        }
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        return (url, frames, size)
    }

    @Test(
        "the file-size limit uses most of the room: default settings, 60 KB of VGA — not stopped after the first key frame while the encoder still holds frames"
    )
    func limitUsesTheRoom() throws {
        try #require(FFmpegTool.isInstalled)
        let movie = MovieFileOutput()
        movie.maxRecordedFileSize = 60_000
        guard let (url, frames, size) = try recordToLimit(movie, named: "room.mp4", preset: .vga640x480) else { return }
        // Counting the encoder's held frames at the first key frame's size stopped this at ~12 KB
        // (and every limit up to ~270 KB at the same 17 frames).
        #expect(size <= 60_000 && size >= 30_000, "\(size) bytes, \(frames) frames")
        #expect(try FFmpegTool.probe(url).frames == frames)
    }
}
