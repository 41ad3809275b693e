import Dispatch
import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Synchronization
import Testing

/// Collects a photo output's results; ``wait(for:)`` returns as soon as `count` have come
/// (a deadline only as a last resort: 4K stills in a debug build on a busy machine are slow).
final class PhotoWaiter: PhotoCaptureDelegate {
    let results = Mutex<[(Photo?, CaptureError?)]>([])
    private let arrived = DispatchSemaphore(value: 0)
    func photoOutput(_ output: PhotoOutput, didFinishProcessingPhoto photo: Photo?, error: CaptureError?) {
        results.withLock { $0.append((photo, error)) }
        arrived.signal()
    }
    func wait(for count: Int, timeout: Double = 60) -> [(Photo?, CaptureError?)] {
        let deadline = DispatchTime.now() + timeout
        while results.withLock({ $0.count }) < count, arrived.wait(timeout: deadline) == .success {}
        return results.withLock { $0 }
    }
}

@Suite("Photo and movie-file outputs")
struct OutputTests {
    @Test("a recording that ends before its first frame leaves no file (the reserved name was never a movie)", arguments: ["avi", "mp4"])
    func endedBeforeAnyFrame(_ container: String) throws {
        let movie = MovieFileOutput() // in no session: no frame ever comes
        let url = Fixtures.temporaryFolder().appendingPathComponent("never.\(container)")
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        #expect(FileManager.default.fileExists(atPath: url.path), "the name is taken at the start")
        movie.stopRecording()
        let (_, frames, _) = try #require(waiter.wait())
        #expect(frames == 0)
        #expect(!FileManager.default.fileExists(atPath: url.path), "an empty, headerless file was left behind")
    }

    @Test("a photo is a JPEG of the preset's size, taken while a video output runs; settings are single-use")
    func photo() throws {
        let recorder = Recorder()
        let (session, video) = try makeSession(.virtualCamera, preset: .photo, recorder: recorder)
        let photos = PhotoOutput()
        try session.addOutput(photos)
        let waiter = PhotoWaiter()
        photos.capturePhoto(with: PhotoSettings(), delegate: waiter)
        #expect(waiter.wait(for: 1).first?.1 != nil) // not running yet: an error, not a hang
        try session.startRunning()
        let settings = try PhotoSettings(quality: 80)
        photos.capturePhoto(with: settings, delegate: waiter)
        photos.capturePhoto(with: settings, delegate: waiter) // reused: refused
        photos.capturePhoto(with: PhotoSettings(from: settings), delegate: waiter)
        let results = waiter.wait(for: 4)
        session.stopRunning()
        try #require(results.count == 4)
        let taken = results.compactMap(\.0)
        #expect(taken.count == 2)
        #expect(results.filter { if case .photoSettingsReused(settings.uniqueID)? = $0.1 { true } else { false } }.count == 1)
        let jpeg = try #require(taken.first).fileDataRepresentation()
        let decoded = try JPEG.decode(jpeg, to: .rgb24)
        #expect(decoded.width == 3840 && decoded.height == 2160) // photo: the largest size offered
        #expect(PhotoSettings(from: settings).uniqueID != settings.uniqueID)
        #expect(video.counts.delivered > 0) // the video output ran alongside
    }

    @Test("an AVI recording is read back by OpenCV (FFmpeg and its own MJPEG reader) with the right count and size")
    func recording() throws {
        let folder = Fixtures.temporaryFolder()
        let url = folder.appendingPathComponent("clip.avi")
        let movie = MovieFileOutput()
        let session = try virtualSession(outputs: [movie])
        try session.startRunning()
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        #expect(movie.isRecording)
        #expect(throws: CaptureError.self) { try movie.startRecording(to: url, recordingDelegate: waiter) }
        try #require(eventually { movie.counts.delivered >= 15 }, "frames reached the recording")
        movie.stopRecording()
        let (done, frames, error) = try #require(waiter.wait())
        session.stopRunning()
        #expect(done == url && error == nil && frames >= 15)
        for own in [false, true] {
            let probe = try OpenCV.probeVideo(url.path, ownMJPEGReader: own)
            // Through FFmpeg, every frame written; OpenCV's own reader also shows the last
            // picture again for each frame dropped while recording (an empty chunk).
            #expect(probe.decodedFrames == (own ? probe.headerFrames : frames) && probe.headerFrames >= frames, "\(probe)")
            #expect(probe.width == 352 && probe.height == 288, "\(probe)")
            #expect(abs(probe.fps - 30) < 0.1)
        }
        // Never overwrites.
        let again = CaptureSession()
        let second = MovieFileOutput()
        try again.addInput(CaptureDeviceInput(device: .virtualCamera))
        try again.addOutput(second)
        #expect(throws: CaptureError.self) { try second.startRecording(to: url, recordingDelegate: waiter) }
    }

    @Test(
        "duration, file-size and free-space limits end the recording with an error and a valid file (none when no frame was written)",
        arguments: ["duration", "size", "disk"])
    func limits(limit: String) throws {
        let url = Fixtures.temporaryFolder().appendingPathComponent("limited.avi")
        let movie = MovieFileOutput()
        switch limit {
        case "duration": movie.maxRecordedDuration = 0.5
        case "size": movie.maxRecordedFileSize = 60_000
        default: movie.minFreeDiskSpaceLimit = Int.max // there is never that much free
        }
        let session = try virtualSession(outputs: [movie])
        try session.startRunning()
        let waiter = RecordingWaiter()
        try movie.startRecording(to: url, recordingDelegate: waiter)
        let (_, frames, error) = try #require(waiter.wait())
        session.stopRunning()
        #expect(error != nil && !movie.isRecording)
        switch (limit, error) {
        case ("duration", .maximumDurationReached(0.5)?), ("size", .maximumFileSizeReached(60_000)?), ("disk", .freeDiskSpaceBelowLimit?):
            break
        default: Issue.record("\(limit) ended the recording with \(String(describing: error))")
        }
        guard limit != "disk" else {
            // Stopped before the first frame: no movie, so no file (complete or absent).
            #expect(frames == 0 && !FileManager.default.fileExists(atPath: url.path))
            return
        }
        let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        if limit == "duration" {
            #expect(frames >= 13 && frames <= 17, "\(frames) frames in 0.5 s at 30 fps")
        } else {
            #expect(size <= 60_000 && frames > 0, "\(size) bytes")
        }
        let probe = try OpenCV.probeVideo(url.path, ownMJPEGReader: true)
        #expect(probe.decodedFrames == probe.headerFrames && probe.headerFrames >= frames && probe.width == 352, "\(probe)")
    }
}
