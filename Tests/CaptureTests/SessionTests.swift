import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

@Suite("CaptureSession with the virtual camera")
struct SessionTests {
    @Test("the virtual camera runs at 30 fps in real time, timestamped and numbered like a camera, with a face in view")
    func virtualCamera() throws {
        let recorder = Recorder(keepPixels: true)
        let (session, output) = try makeSession(.virtualCamera, recorder: recorder)
        try session.startRunning()
        let start = Date()
        #expect(recorder.wait { $0.frames.count >= 30 })
        let elapsed = Date().timeIntervalSince(start)
        session.stopRunning()
        #expect(elapsed > 0.8 && elapsed < 2.5, "30 frames took \(elapsed) s")
        let frames = recorder.frames
        try #require(frames.count >= 16)
        #expect(frames[0].pixelBuffer.format == .nv12VideoRange && frames[0].pixelBuffer.width == 640)
        #expect(
            zip(frames, frames.dropFirst()).allSatisfy { $0.captureInstant < $1.captureInstant && $0.sequenceNumber < $1.sequenceNumber })
        let rate = Double(frames.count - 1) / (frames.last!.presentationTime - frames[0].presentationTime)
        #expect(abs(rate - 30) < 0.5)
        // The picture moves, and a real detector finds the face in it.
        #expect(frames[0].pixelBuffer.packedBytes() != frames[15].pixelBuffer.packedBytes())
        #expect(try HaarFaceDetector().detect(in: frames[10].pixelBuffer).count == 1)
        #expect(output.counts.isBalanced && output.counts.pending == 0)
        #expect(session.inputs[0].activeFrameRate == 30)
    }

    @Test("a delegate slower than the frame rate gets frameWasLate drops, the newest frame, and bounded latency")
    func slowDelegate() throws {
        let recorder = Recorder(delay: 0.1) // 10 fps consumer, 30 fps camera
        let (session, output) = try makeSession(.virtualCamera, recorder: recorder)
        try session.startRunning()
        Thread.sleep(forTimeInterval: 1.5)
        session.stopRunning()
        let counts = output.counts
        #expect(counts.dropped(.frameWasLate) >= 20)
        #expect(counts.delivered >= 10 && counts.delivered <= 18)
        #expect(counts.isBalanced && counts.pending == 0)
        #expect(recorder.drops(.frameWasLate) == counts.dropped(.frameWasLate)) // didDrop once per frame
        // No backlog: a delivered frame is at most one consumer period plus a frame old.
        #expect(recorder.latencies.max()! < 0.1 + 2.0 / 30 + 0.05, "max latency \(recorder.latencies.max()!)")
        #expect(recorder.record.withLock { $0.busyCallbacks } == 0) // serial queue
    }

    @Test("a delegate that keeps buffers starves the pool: outOfBuffers")
    func holdingBuffers() throws {
        let recorder = Recorder(holdFirst: 100)
        let (session, output) = try makeSession(.virtualCamera, recorder: recorder)
        try session.startRunning()
        // Until the pool has been short of buffers for 8 frames (about 0.4 s when idle).
        #expect(eventually { output.counts.dropped(.outOfBuffers) >= 8 })
        session.stopRunning()
        #expect(output.counts.delivered == 4) // the pool's size
        #expect(output.counts.dropped(.outOfBuffers) >= 8)
        #expect(output.counts.isBalanced)
        recorder.releaseHeld()
    }

    @Test("without late-frame discarding, frames queue up to the buffer count, then outOfBuffers")
    func queueing() throws {
        let recorder = Recorder(delay: 0.1)
        let (session, output) = try makeSession(.virtualCamera, recorder: recorder, discardsLate: false)
        try session.startRunning()
        Thread.sleep(forTimeInterval: 1.0)
        session.stopRunning()
        let counts = output.counts
        #expect(counts.dropped(.frameWasLate) == 0)
        #expect(counts.dropped(.outOfBuffers) > 0)
        #expect(counts.isBalanced && counts.pending == 0)
        // Queued frames grow old: latency well above one consumer period.
        #expect(recorder.latencies.max()! > 0.2)
    }

    @Test("frames as an AsyncSequence, converted to the requested format")
    func asyncFrames() async throws {
        let session = CaptureSession()
        let output = VideoDataOutput()
        output.videoSettings = .init(pixelFormat: .bgra32)
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        try session.setSessionPreset(.cif352x288)
        try session.addOutput(output)
        let frames = output.sampleBuffers
        try session.startRunning()
        var seen: [SampleBuffer] = []
        for try await frame in frames {
            seen.append(frame)
            if seen.count == 5 { break }
        }
        session.stopRunning()
        #expect(seen.count == 5)
        #expect(seen.allSatisfy { $0.pixelBuffer.format == .bgra32 && $0.pixelBuffer.width == 352 && $0.pixelBuffer.height == 288 })
        #expect(output.counts.isBalanced)
    }

    @Test("an output with no delegate and no task iterating counts its frames late, never delivered")
    func noConsumerIsLate() async throws {
        let session = CaptureSession()
        let output = VideoDataOutput()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        try session.setSessionPreset(.cif352x288)
        try session.addOutput(output)
        let drops = output.droppedFrames
        try session.startRunning()
        var late = 0
        for await drop in drops where drop.reason == .frameWasLate {
            late += 1
            if late == 3 { break }
        }
        session.stopRunning()
        let counts = output.counts
        #expect(counts.delivered == 0)
        #expect(counts.dropped(.frameWasLate) >= 3)
        #expect(counts.isBalanced)
    }

    @Test("an iterator that claims the frames before the session starts is delivered only the frames it takes")
    func claimedBeforeStart() async throws {
        let session = CaptureSession()
        let output = VideoDataOutput()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        try session.setSessionPreset(.cif352x288)
        try session.addOutput(output)
        var frames = output.sampleBuffers.makeAsyncIterator()
        try frames.claim()
        let drops = output.droppedFrames
        try session.startRunning()
        // While nobody pulls, newer frames replace the waiting one, which is counted late.
        for await drop in drops where drop.reason == .frameWasLate { break }
        let frame = try await frames.next()
        session.stopRunning()
        let counts = output.counts
        #expect(frame != nil && frame!.sequenceNumber > 0)
        #expect(counts.delivered == 1)
        #expect(counts.isBalanced)
    }

    @Test("configuration misuse throws clear errors and never traps")
    func misuse() throws {
        let session = CaptureSession()
        let noInput = thrownCaptureError { try session.startRunning() }
        guard case .noInput? = noInput else {
            Issue.record("\(String(describing: noInput))")
            return
        }
        let output = VideoDataOutput()
        try session.addOutput(output)
        #expect(!session.canAddOutput(output))
        #expect(thrownCaptureError { try session.addOutput(output) } != nil)
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        #expect(thrownCaptureError { try session.addInput(CaptureDeviceInput(device: .virtualCamera)) } != nil)
        #expect(thrownCaptureError { try session.commitConfiguration() } != nil)
        session.beginConfiguration()
        let inside = thrownCaptureError { try session.startRunning() }
        #expect(inside?.description.contains("commit first") == true)
        try session.commitConfiguration()
        #expect(SessionPreset(named: "hd1280x721") == nil)
        let connectionOK = thrownCaptureError { try session.startRunning() }
        #expect(connectionOK == nil)
        let connection = try #require(output.connection)
        #expect(connection.isVideoRotationAngleSupported(90) && !connection.isVideoRotationAngleSupported(45))
        #expect(thrownCaptureError { try connection.setVideoRotationAngle(45) } != nil)
        session.stopRunning()
    }

    @Test("nested configuration applies once, at the outermost commit")
    func nestedConfiguration() throws {
        let session = CaptureSession()
        session.beginConfiguration()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        session.beginConfiguration()
        try session.setSessionPreset(.hd1280x720)
        try session.commitConfiguration()
        #expect(session.sessionPreset == .hd1280x720) // staged
        try session.commitConfiguration()
        #expect(session.inputs.count == 1 && session.sessionPreset == .hd1280x720)
    }

    @Test("swapping the input of a running session inside a configuration block switches cameras")
    func cameraSwitch() throws {
        let recorder = Recorder(keepPixels: true)
        let (session, output) = try makeSession(.virtualCamera, preset: .vga640x480, recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count >= 3 })
        let folder = Fixtures.temporaryFolder()
        let file = folder.appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 5, width: 320, height: 240, to: file)
        try session.configure {
            session.removeInput(session.inputs[0])
            try session.addInput(CaptureDeviceInput(device: CaptureDevice.file(file)))
            try session.setSessionPreset(.high)
        }
        #expect(log.wait { if case .sourceEnded = $0 { true } else { false } } != nil)
        let sizes = Set(recorder.frames.map { "\($0.pixelBuffer.width)x\($0.pixelBuffer.height)" })
        #expect(sizes == ["640x480", "320x240"])
        #expect(recorder.frames.filter { $0.pixelBuffer.width == 320 }.count == 5)
        #expect(output.counts.isBalanced)
        // A reconfiguration, not a restart: one start, no stop before the file ended, one
        // inputsChanged, and the frame numbers go on across the switch.
        let names = log.all.map { "\($0)" }
        #expect(names.filter { $0 == "didStartRunning" }.count == 1, "\(names)")
        #expect(names.prefix { $0 != "sourceEnded" }.allSatisfy { $0 != "didStopRunning" }, "\(names)")
        #expect(names.filter { $0 == "inputsChanged" }.count == 1, "\(names)")
        let sequence = recorder.frames.map(\.sequenceNumber)
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $0 < $1 }, "\(sequence)")
        session.stopRunning()
    }

    @Test("rotation and mirroring set on the connection are applied to what it delivers")
    func connectionTransforms() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 2, width: 64, height: 48, to: file)
        for (angle, mirrored) in [(90.0, false), (90.0, true), (180.0, false), (0.0, true)] {
            let recorder = Recorder(keepPixels: true)
            let (session, output) = try makeSession(CaptureDevice.file(file), preset: .high, recorder: recorder, format: .gray8)
            let connection = try #require(output.connection)
            try connection.setVideoRotationAngle(angle)
            connection.isVideoMirrored = mirrored
            try session.startRunning()
            try #require(recorder.wait { $0.frames.count == 2 })
            session.stopRunning()
            let image = recorder.frames[1].pixelBuffer
            let (w, h) = angle == 90 ? (48, 64) : (64, 48)
            #expect(image.width == w && image.height == h)
            // Where source pixel (x, y) lands, for each transform.
            func source(_ c: Int, _ r: Int) -> (Int, Int) {
                switch (angle, mirrored) {
                case (90, false): (r, 47 - c) // clockwise quarter turn
                case (90, true): (r, c) // … then mirrored: a transpose
                case (180, _): (63 - c, 47 - r)
                default: (63 - c, r) // mirror only
                }
            }
            for (c, r) in [(0, 0), (5, 9), (w - 1, h - 1), (w / 2, 3)] {
                let (x, y) = source(c, r)
                let got = image.withUnsafeBytes(ofPlane: 0) { b, p in b[r * p.bytesPerRow + c] }
                #expect(got == Y4MWriter.luma(frame: 1, x: x, y: y), "angle \(angle) mirrored \(mirrored) at (\(c), \(r))")
            }
        }
    }

    @Test("a converted, rotated stream reuses its buffer once the delegate lets go; a frame it holds keeps its pixels")
    func reusedBuffers() throws {
        final class Watcher: VideoDataOutputSampleBufferDelegate {
            struct Seen {
                var addresses: [UInt] = []
                var held: SampleBuffer?
                var heldBytes: [UInt8] = []
            }
            let seen = Mutex(Seen())
            func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
                let address = frame.pixelBuffer.withUnsafeBytes(ofPlane: 0) { raw, _ in UInt(bitPattern: raw.baseAddress!) }
                seen.withLock { s in
                    s.addresses.append(address)
                    if s.addresses.count == 2 { (s.held, s.heldBytes) = (frame, frame.pixelBuffer.packedBytes()) }
                }
            }
            func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {}
        }
        let watcher = Watcher()
        let (session, output) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: watcher, format: .bgra32)
        try output.connection?.setVideoRotationAngle(180)
        try session.startRunning()
        let deadline = Timestamp.now()
        while watcher.seen.withLock({ $0.addresses.count }) < 8 && Timestamp.now().seconds(since: deadline) < 5 {
            Thread.sleep(forTimeInterval: 0.01)
        }
        session.stopRunning()
        let seen = watcher.seen.withLock { $0 }
        try #require(seen.addresses.count >= 8)
        // Frame 3 needed a new buffer (frame 2's is held); from frame 4 on, frame 3's is reused.
        #expect(Set(seen.addresses[3...]).count == 1, "\(seen.addresses)")
        #expect(!seen.addresses[3...].contains(seen.addresses[1]))
        let held = try #require(seen.held)
        #expect(held.pixelBuffer.packedBytes() == seen.heldBytes)
        #expect(held.pixelBuffer.format == .bgra32 && held.pixelBuffer.width == 352)
    }

    @Test("a disabled connection delivers nothing, while an enabled one beside it does")
    func disabledConnection() throws {
        let recorder = Recorder()
        let (session, output) = try makeSession(.virtualCamera, recorder: recorder)
        output.connection?.isEnabled = false
        // A second output, enabled: frames flowed while the disabled one got none (a fixed
        // 0.3 s proved nothing if the camera had not started by then).
        let enabled = VideoDataOutput()
        let witness = Recorder()
        enabled.setSampleBufferDelegate(witness)
        try session.configure { try session.addOutput(enabled) }
        try session.startRunning()
        #expect(witness.wait { $0.frames.count >= 5 })
        session.stopRunning()
        #expect(recorder.frames.isEmpty && output.counts.captured == 0)
    }

    @Test("notifications arrive as an AsyncSequence too")
    func notificationStream() async throws {
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        let stream = session.notifications
        try session.startRunning()
        session.stopRunning()
        var seen: [String] = []
        for await note in stream {
            seen.append("\(note)")
            if seen.count == 2 { break }
        }
        #expect(seen == ["didStartRunning", "didStopRunning"])
    }
}
