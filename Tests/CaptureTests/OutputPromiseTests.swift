import Dispatch
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// The outputs' promises under misuse and contention (#14): each case failed before.
@Suite("Outputs keep their promises")
struct OutputPromiseTests {
    @Test("a rotation the delivered format cannot take is refused when capture starts, not frame by frame")
    func rotationRefusedAtCommit() throws {
        let recorder = Recorder()
        let (session, output) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: recorder, format: .yuyv)
        let connection = try #require(output.connection)
        // Before the session has run, the format is unknown: a right angle is taken...
        try connection.setVideoRotationAngle(90)
        #expect(throws: CaptureError.self) { try connection.setVideoRotationAngle(45) }
        // ...and refused at start, with nothing delivered as corrupt.
        #expect(throws: CaptureError.self) { try session.startRunning() }
        #expect(!session.isRunning)
        try connection.setVideoRotationAngle(180)
        try session.startRunning()
        defer { session.stopRunning() }
        #expect(recorder.wait { $0.frames.count >= 3 })
        #expect(recorder.drops(.corrupt) == 0)
        // Now the format is known: 90 degrees on YUYV is refused at once.
        #expect(!connection.isVideoRotationAngleSupported(90))
        #expect(throws: CaptureError.self) { try connection.setVideoRotationAngle(90) }
        #expect(connection.videoRotationAngle == 180)
    }

    @Test("stopRunning() from the delegate's own callback returns at once instead of waiting for itself")
    func stopFromDelegateQueue() throws {
        final class Stopper: VideoDataOutputSampleBufferDelegate {
            let session = Mutex<CaptureSession?>(nil)
            let took = Mutex<Double?>(nil)
            func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection) {
                guard
                    let session = session.withLock({ s in
                        defer { s = nil }
                        return s
                    })
                else { return }
                let start = Date()
                session.stopRunning()
                took.withLock { $0 = Date().timeIntervalSince(start) }
            }
        }
        let stopper = Stopper()
        let (session, _) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: stopper)
        stopper.session.withLock { $0 = session }
        try session.startRunning()
        for _ in 0..<500 where stopper.took.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.01) }
        let took = try #require(stopper.took.withLock { $0 })
        #expect(took < 1, "stopRunning() on the delegate queue took \(took) s")
        #expect(!session.isRunning)
    }

    @Test("a photo request refused because the session is stopped does not use up its settings")
    func refusedPhotoKeepsSettings() throws {
        let photos = PhotoOutput()
        let session = try virtualSession(outputs: [photos])
        let waiter = PhotoWaiter()
        let settings = PhotoSettings()
        photos.capturePhoto(with: settings, delegate: waiter)
        let refused = waiter.wait(for: 1).first?.1
        guard case .sessionNotRunning? = refused else {
            Issue.record("refused with \(String(describing: refused))")
            return
        }
        try session.startRunning()
        defer { session.stopRunning() }
        photos.capturePhoto(with: settings, delegate: waiter)
        let results = waiter.wait(for: 2)
        try #require(results.count == 2)
        #expect(results[1].0 != nil, "the same settings were refused: \(String(describing: results[1].1))")
    }

    @Test("a recording onto a disk that blocks does not delay another output's frames")
    func slowDiskDoesNotStallCapture() throws {
        let recorder = Recorder()
        let (session, video) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: recorder)
        let movie = MovieFileOutput()
        movie.beforeWrite = { Thread.sleep(forTimeInterval: 0.4) } // each write blocks for 12 frame times
        try session.addOutput(movie)
        try session.startRunning()
        let waiter = RecordingWaiter()
        let url = Fixtures.temporaryFolder().appendingPathComponent("slow.avi")
        try movie.startRecording(to: url, recordingDelegate: waiter)
        let before = recorder.frames.count
        Thread.sleep(forTimeInterval: 1.5)
        let during = recorder.frames.count - before
        movie.stopRecording()
        session.stopRunning()
        let (_, written, _) = try #require(waiter.wait())
        #expect(written >= 2 && written <= 6, "\(written) frames written at 0.4 s each")
        // 1.5 s at 30 fps is 45 frames; before the fix the video output got one per blocked write.
        #expect(during >= 35, "the video output got \(during) frames in 1.5 s while the recording blocked")
        #expect(video.counts.isBalanced)
    }

    @Test("buffer usage read in a loop while the session starts and stops, from another thread")
    func bufferUsageWhileStartingAndStopping() throws {
        let session = try virtualSession(outputs: [VideoDataOutput()])
        let stop = Atomic(false)
        let reads = Atomic(0)
        let reader = Thread {
            while !stop.load(ordering: .relaxed) {
                if let usage = session.bufferUsage { precondition(usage.buffersInUse >= 0) }
                reads.add(1, ordering: .relaxed)
            }
        }
        reader.start()
        for _ in 0..<20 {
            try session.startRunning()
            Thread.sleep(forTimeInterval: 0.01)
            session.stopRunning()
        }
        stop.store(true, ordering: .relaxed)
        Thread.sleep(forTimeInterval: 0.05)
        #expect(reads.load(ordering: .relaxed) > 100)
    }

    @Test(
        "recording refuses a container it does not write, and says why a file cannot be made",
        arguments: ["clip.mkv", "clip.webm", "missing/clip.avi", "missing/clip.mp4"])
    func recordingRefusals(name: String) throws {
        let movie = MovieFileOutput()
        let session = try virtualSession(outputs: [movie])
        #expect(session.outputs.count == 1)
        let url = Fixtures.temporaryFolder().appendingPathComponent(name)
        let error = try #require(throws: CaptureError.self) { try movie.startRecording(to: url, recordingDelegate: RecordingWaiter()) }
        let text = error.description
        if name.hasPrefix("missing/") {
            #expect(text.contains("folder does not exist") && !text.contains("permission"), "\(text)")
        } else {
            #expect(text.contains(".mp4") && text.contains(".avi"), "\(text)")
        }
        #expect(!FileManager.default.fileExists(atPath: url.path) && !movie.isRecording)
    }

    @Test("the movie delegate is called on the output's queue, not on the thread calling stopRecording()")
    func movieDelegateQueue() throws {
        final class QueueCheck: RecordingDelegate {
            let thread = Mutex<UInt?>(nil)
            func fileOutput(_ output: MovieFileOutput, didFinishRecordingTo url: URL, frames: Int, error: CaptureError?) {
                let me = UInt(pthread_self())
                thread.withLock { $0 = me }
            }
        }
        let movie = MovieFileOutput()
        let session = try virtualSession(outputs: [movie])
        try session.startRunning()
        defer { session.stopRunning() }
        let check = QueueCheck()
        try movie.startRecording(to: Fixtures.temporaryFolder().appendingPathComponent("q.avi"), recordingDelegate: check)
        try #require(eventually { movie.counts.delivered >= 3 }, "frames reached the recording")
        movie.stopRecording()
        _ = eventually { check.thread.withLock({ $0 }) != nil }
        let called = try #require(check.thread.withLock { $0 })
        #expect(called != UInt(pthread_self()))
    }
}
