import CV4L2
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

@Suite("V4L2 backend against a fake kernel")
struct V4L2BackendTests {
    @Test("discovery finds capture nodes only, with the formats, sizes and rates the driver enumerates")
    func discovery() throws {
        let kernel = FakeKernel(nodes: [
            "/dev/video0": .init(modes: FakeKernel.webcamModes, rates: [30, 15]),
            "/dev/video1": .init(capture: false) // a metadata node, as UVC cameras have
        ])
        let discovery = DiscoverySession(deviceTypes: [.external, .virtual], kernel: kernel)
        let devices = discovery.devices
        #expect(devices.map(\.uniqueID) == ["/dev/video0", "virtual"])
        let camera = devices[0]
        #expect(camera.modelID == "fake" && camera.localizedName == "Fake Camera")
        #expect(Set(camera.formats.map(\.fourCC)) == ["YUYV", "NV12", "MJPG"])
        #expect(camera.supportedSizes == [FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720)])
        #expect(camera.formats.allSatisfy { $0.frameRates == [15, 30] })
        #expect(discovery.problems.count == 1)
        #expect(camera.supportsSessionPreset(.hd1280x720) && !camera.supportsSessionPreset(.cif352x288))
        #expect(CaptureDevice.default(for: .video, kernel: kernel).uniqueID == "/dev/video0")
        #expect(CaptureDevice.default(for: .video, kernel: FakeKernel(nodes: [:])).deviceType == .virtual)
    }

    @Test("a preset the camera does not offer is refused with what it does offer")
    func unsupportedPreset() throws {
        let kernel = FakeKernel()
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)))
        #expect(session.canSetSessionPreset(.hd1280x720))
        #expect(!session.canSetSessionPreset(.cif352x288))
        let error = thrownCaptureError { try session.setSessionPreset(.cif352x288) }
        guard case .unsupportedPreset(let preset, _, let available)? = error else {
            Issue.record("cif352x288: \(String(describing: error))")
            return
        }
        #expect(preset == .cif352x288 && available == ["640x480", "1280x720"])
    }

    @Test("format negotiation prefers the output's format natively, sets the frame rate, and delivers zero-copy")
    func negotiation() throws {
        let kernel = FakeKernel()
        kernel.setScript((0..<3).map { .frame(sequence: $0) })
        let recorder = Recorder()
        let device = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        try device.setActiveVideoMinFrameDuration(1.0 / 15)
        let (session, output) = try makeSession(
            device, preset: .hd1280x720, recorder: recorder, format: .nv12VideoRange,
            discardsLate: false)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count == 3 })
        session.stopRunning()
        #expect(kernel.with { $0.format } == FakeKernel.Mode(fourCC: cv4l2_PIX_FMT_NV12, width: 1280, height: 720))
        #expect(kernel.with { $0.frameRate } == 15)
        #expect(session.inputs[0].activeFormat?.fourCC == "NV12")
        let frame = try #require(recorder.frames.last)
        #expect(frame.sequenceNumber == 2)
        #expect(output.counts.delivered == 3 && output.counts.isBalanced)
    }

    @Test("delivered frames borrow the driver's buffer, which goes back to the kernel when released")
    func zeroCopyAndRequeue() throws {
        let kernel = FakeKernel()
        kernel.with { $0.rowPadding = 64 } // a stride wider than the row
        kernel.setScript((0..<8).map { .frame(sequence: $0) })
        let recorder = Recorder(keepPixels: false)
        final class Inspect: VideoDataOutputSampleBufferDelegate {
            let buffers = Mutex<[PixelBuffer]>([])
            func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
                buffers.withLock { $0.append(frame.pixelBuffer) }
            }
        }
        let (session, output) = try makeSession(
            try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: recorder, format: .yuyv,
            discardsLate: false)
        let inspect = Inspect()
        output.setSampleBufferDelegate(inspect)
        try session.startRunning()
        // The consumer holds all four driver buffers: nothing is re-queued while it does.
        #expect(recorder.wait { _ in inspect.buffers.withLock { $0.count } == 4 })
        do {
            let first = inspect.buffers.withLock { $0[0] }
            #expect(first.isBorrowed)
            #expect(first.plane(0).bytesPerRow == 640 * 2 + 64)
            // Luma of frame 0 is 0 (the fake fills with the sequence number); row padding skipped.
            #expect(first.withUnsafeBytes(ofPlane: 0) { b, _ in b[0] } == 0)
        }
        let requeuesBefore = kernel.with { $0.qbufPerIndex.values.reduce(0, +) }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(kernel.with { $0.qbufPerIndex.values.reduce(0, +) } == requeuesBefore)
        inspect.buffers.withLock { $0.removeAll() }
        #expect(recorder.wait { _ in kernel.with { $0.qbufPerIndex.values.reduce(0, +) } > requeuesBefore })
        session.stopRunning()
    }

    @Test("sequence gaps are discontinuity drops of exactly that many frames")
    func sequenceGaps() throws {
        let (recorder, output) = try #require(try play([0, 1, 2, 5, 6, 10].map { .frame(sequence: $0) }, frames: 11))
        let counts = output.counts
        #expect(counts.captured == 11)
        #expect(counts.dropped(.discontinuity) == 5)
        #expect(counts.delivered + counts.dropped(.frameWasLate) == 6)
        #expect(counts.isBalanced && counts.pending == 0)
        #expect(recorder.drops.filter { $0.reason == .discontinuity }.map(\.sequenceNumber) == [3, 4, 7, 8, 9])
    }

    @Test("the 32-bit sequence wrap is not a loss")
    func sequenceWrap() throws {
        let (recorder, output) = try #require(
            try play([0xFFFF_FFFD, 0xFFFF_FFFE, 0xFFFF_FFFF, 0, 1, 2].map { .frame(sequence: $0) }, frames: 6))
        #expect(output.counts.captured == 6 && output.counts.dropped(.discontinuity) == 0)
        let numbers = (recorder.frames.map(\.sequenceNumber) + recorder.drops.map(\.sequenceNumber)).sorted()
        #expect(numbers == Array(0xFFFF_FFFD...0x1_0000_0002), "FrameKit's numbers run on past 2^32: \(numbers)")
    }

    @Test("a number the driver repeats or runs back (a restart) still gets a fresh one: each frame is reported once")
    func sequenceRepeatedOrBackwards() throws {
        // vivid under emulation on a busy machine has been seen to give two buffers one number.
        let (recorder, output) = try #require(try play([4, 5, 5, 6, 9, 2, 3].map { .frame(sequence: $0) }, frames: 9, discardsLate: false))
        #expect(recorder.frames.map(\.sequenceNumber) == [4, 5, 6, 7, 10, 11, 12])
        // The two numbers the driver skipped are two lost frames, reported once each. Their
        // reason is V4L2Source's rule: a discontinuity, or out of buffers where the stream had
        // no buffer queued before the frame after the gap — the consumer behind, every buffer
        // held by a queued frame (late frames are kept here): seen once in CI under load.
        #expect(recorder.drops.map(\.sequenceNumber) == [8, 9])
        let reasons = Set(recorder.drops.map(\.reason))
        #expect(reasons.count == 1 && reasons.isSubset(of: [.discontinuity, .outOfBuffers]), "\(recorder.drops)")
        #expect(reasons.first.map { output.counts.dropped($0) } == 2, "\(output.counts)")
        #expect(output.counts.captured == 9 && output.counts.isBalanced)
    }

    @Test("a buffer with V4L2_BUF_FLAG_ERROR is one corrupt drop and streaming goes on")
    func bufferError() throws {
        let recorder = Recorder()
        let (session, output, _) = try scriptedSession(
            [.frame(sequence: 0), .frame(sequence: 1, error: true), .frame(sequence: 2), .frame(sequence: 3)], recorder: recorder)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count + $0.drops.count == 4 })
        #expect(session.isRunning)
        session.stopRunning()
        #expect(output.counts.dropped(.corrupt) == 1)
        #expect(recorder.drops.first { $0.reason == .corrupt }?.sequenceNumber == 1)
        #expect(recorder.frames.last?.sequenceNumber == 3)
    }

    @Test("EIO while streaming is a runtime-error notification and a clean stop")
    func fatalStreamingError() throws {
        let recorder = Recorder()
        let (session, _, kernel) = try scriptedSession([.frame(sequence: 0), .fail(EIO)], recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        let note = log.wait { if case .runtimeError = $0 { true } else { false } }
        guard case .runtimeError(.systemCall(let path, let error))? = note else {
            Issue.record("no runtime error: \(log.all)")
            return
        }
        #expect(path == "/dev/video0" && error.errno == EIO && error.call == "ioctl(VIDIOC_DQBUF)")
        #expect(recorder.wait { _ in !session.isRunning })
        session.stopRunning() // safe after the session stopped itself
        #expect(kernel.calls("munmap") == 4 && kernel.calls("close") >= 2) // every mapping and descriptor released
    }

    @Test("ENODEV (unplugged) is an interruption, and restarting with another input ends it")
    func unplugged() throws {
        let recorder = Recorder()
        let (session, _, _) = try scriptedSession([.frame(sequence: 0), .fail(ENODEV)], recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        let note = log.wait { if case .wasInterrupted = $0 { true } else { false } }
        guard case .wasInterrupted(.videoDeviceNotAvailable)? = note else {
            Issue.record("no interruption: \(log.all)")
            return
        }
        #expect(recorder.wait { _ in session.isInterrupted && !session.isRunning })
        // Switch to the virtual camera and run again: the interruption ends.
        try session.configure {
            session.removeInput(session.inputs[0])
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        }
        try session.startRunning()
        #expect(log.wait { if case .interruptionEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
    }

    @Test("EINTR is retried by the one syscall door, everywhere")
    func interruptedCalls() throws {
        let kernel = FakeKernel()
        kernel.setScript((0..<5).map { .frame(sequence: $0) })
        kernel.with { $0.interruptNext = 7 } // open, QUERYCAP, ENUM_FMT … each interrupted once
        let device = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        #expect(device.formats.count == 5)
        kernel.with { $0.interruptNext = 40 }
        let recorder = Recorder()
        let (session, output) = try makeSession(device, recorder: recorder)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count + $0.drops.count == 5 })
        session.stopRunning()
        #expect(kernel.calls("EINTR") == 47)
        #expect(output.counts.captured == 5 && output.counts.isBalanced)
    }

    @Test("REQBUFS and STREAMON failures fail the start with the call named; a second start succeeds")
    func startFailures() throws {
        for inject in ["REQBUFS", "STREAMON"] {
            let kernel = FakeKernel()
            kernel.setScript([.frame(sequence: 0)])
            kernel.with { if inject == "REQBUFS" { $0.failNextReqbufs = EINVAL } else { $0.failNextStreamon = EINVAL } }
            let recorder = Recorder()
            let (session, _) = try makeSession(try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: recorder)
            let failure = thrownCaptureError { try session.startRunning() }
            guard case .systemCall(_, let error)? = failure else {
                Issue.record("\(inject): \(String(describing: failure))")
                return
            }
            #expect(error.call == "ioctl(VIDIOC_\(inject))" && error.errno == EINVAL)
            #expect(!session.isRunning)
            try session.startRunning()
            #expect(recorder.wait { $0.frames.count == 1 })
            session.stopRunning()
        }
    }

    @Test("a driver that changes the size in S_FMT is a clear error")
    func formatAdjusted() throws {
        let kernel = FakeKernel()
        kernel.with { $0.adjustSizeTo = (320, 240) }
        let (session, _) = try makeSession(try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: Recorder())
        #expect(throws: CaptureError.self) { try session.startRunning() }
    }

    @Test("two consumers giving buffers back while the capture thread dequeues: each is booked once, no spurious EIO")
    func requeueRacesDequeue() throws {
        final class Holder: VideoDataOutputSampleBufferDelegate {
            let held = Mutex<[SampleBuffer]>([])
            func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
                held.withLock { $0.append(frame) }
            }
            func release() { _ = held.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
        }
        let holder = Holder()
        let kernel = FakeKernel()
        kernel.setScript((0..<4).map { .frame(sequence: $0) })
        // The first re-queue, between its QBUF and the source's note that the buffer is queued,
        // lets a second consumer give back another buffer (fully), then waits until the capture
        // thread has dequeued the first one again (the old order then noted a buffer the kernel
        // no longer held) or 0.2 s (the right order keeps the capture thread out until then).
        let first = Atomic<Bool>(true)
        kernel.afterRequeue.withLock { hook in
            hook = { [kernel] index in
                guard first.exchange(false, ordering: .relaxed) else { return }
                let before = kernel.with { $0.dqbufPerIndex[index, default: 0] }
                Thread.detachNewThread { holder.release() }
                let deadline = Timestamp.now().adding(seconds: 0.2)
                while kernel.with({ $0.dqbufPerIndex[index, default: 0] }) == before && Timestamp.now().seconds(since: deadline) < 0 {
                    usleep(1000)
                }
            }
        }
        let (session, output) = try makeSession(
            try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: holder, discardsLate: false)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(eventually { holder.held.withLock { $0.count } == 4 }) // every buffer held
        kernel.append([.frame(sequence: 4), .frame(sequence: 5)])
        holder.release() // the first re-queue; the second consumer's follows inside it
        #expect(eventually { output.counts.delivered == 6 && holder.held.withLock { $0.count } == 4 })
        // Every buffer held again: the source must wait for one, not poll a kernel that has none.
        kernel.append([.frame(sequence: 6)])
        holder.held.withLock { $0.removeAll() }
        #expect(eventually { output.counts.delivered == 7 })
        session.stopRunning()
        #expect(!log.all.contains { if case .runtimeError = $0 { true } else { false } }, "\(log.all)")
    }

    @Test("a consumer holding every buffer starves the kernel: the gap is outOfBuffers, not discontinuity")
    func starvation() throws {
        let kernel = FakeKernel()
        kernel.setScript((0..<4).map { .frame(sequence: $0) })
        let recorder = Recorder(holdFirst: 4)
        let (session, output) = try makeSession(
            try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: recorder,
            discardsLate: false)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count == 4 })
        Thread.sleep(forTimeInterval: 0.05)
        #expect(kernel.with { $0.queued.isEmpty }) // nothing left for the "camera" to fill
        // While starved the camera lost frames 4…6; the consumer lets go and 7 arrives.
        kernel.append([.frame(sequence: 7)])
        recorder.releaseHeld()
        #expect(recorder.wait { $0.frames.count == 5 })
        session.stopRunning()
        #expect(output.counts.dropped(.outOfBuffers) == 3 && output.counts.dropped(.discontinuity) == 0)
    }

    @Test("a denied device node tells the user about the video group")
    func permissionDenied() throws {
        let kernel = FakeKernel(nodes: ["/dev/video0": .init(denied: true, modes: FakeKernel.webcamModes)])
        #expect(CaptureDevice.authorizationStatus(for: .video, kernel: kernel) == .denied)
        let error = thrownCaptureError { _ = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel) }
        guard case .permissionDenied("/dev/video0")? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(error!.description.contains("video' group"))
        let problems = DiscoverySession(kernel: kernel).problems
        #expect(problems.count == 1)
        #expect(CaptureDevice.authorizationStatus(for: .video, kernel: FakeKernel()) == .authorized)
    }

    @Test("MJPEG frames are decoded into the output's format; a damaged one is a corrupt drop")
    func mjpeg() throws {
        let kernel = FakeKernel(nodes: ["/dev/video0": .init(modes: [.init(fourCC: cv4l2_PIX_FMT_MJPEG, width: 512, height: 512)])])
        let jpeg = try ImageFile.read(Fixtures.astronaut)
        kernel.with { $0.jpegFrame = jpeg }
        kernel.setScript([.frame(sequence: 0), .frame(sequence: 1)])
        let recorder = Recorder(keepPixels: true)
        let device = try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel)
        let (session, output) = try makeSession(device, preset: .photo, recorder: recorder, format: .bgra32, discardsLate: false)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count == 2 })
        let first = try #require(recorder.frames.first).pixelBuffer
        #expect(first.format == .bgra32 && first.width == 512)
        #expect(try HaarFaceDetector().detect(in: first).count == 1)
        kernel.with { $0.jpegFrame = Array(jpeg.prefix(jpeg.count / 3)) }
        kernel.append([.frame(sequence: 2)])
        #expect(recorder.wait { $0.drops.count == 1 })
        session.stopRunning()
        #expect(output.counts.dropped(.corrupt) == 1)
    }

    @Test("opening a path that is not a camera fails with errno and the call's name (real kernel)")
    func notACamera() throws {
        let notCamera = thrownCaptureError { _ = try CaptureDevice.v4l2(path: "/dev/null") }
        guard case .systemCall(let path, let error)? = notCamera else {
            Issue.record("/dev/null: \(String(describing: notCamera))")
            return
        }
        #expect(path == "/dev/null")
        #expect(error.call == "ioctl(VIDIOC_QUERYCAP)" && error.errno == ENOTTY)
        let missing = thrownCaptureError { _ = try CaptureDevice.v4l2(path: "/dev/video-nonexistent") }
        guard case .systemCall(_, let openError)? = missing else {
            Issue.record("missing: \(String(describing: missing))")
            return
        }
        #expect(openError.call == "open(/dev/video-nonexistent)" && openError.errno == ENOENT)
    }
}
