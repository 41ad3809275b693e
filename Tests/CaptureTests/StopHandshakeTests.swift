import Dispatch
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// A stop waits for the delegates by a handshake, not a timeout, and holds no lock while it
/// waits (#32): each case hung, timed out or trapped before.
@Suite("Stops wait for the delegates, holding no lock")
struct StopHandshakeTests {
    /// A delegate that, on its first frame, waits for another thread to be stopping the session
    /// (``stopping``), then does `whileStopping` and notes that it returned.
    final class Interloper: VideoDataOutputSampleBufferDelegate {
        let stopping = Atomic<Bool>(false)
        let entered = DispatchSemaphore(value: 0)
        let returned = Atomic<Bool>(false)
        let whileStopping: @Sendable () -> Void
        private let first = Atomic<Bool>(true)
        init(whileStopping: @escaping @Sendable () -> Void) { self.whileStopping = whileStopping }
        func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection) {
            guard first.exchange(false, ordering: .relaxed) else { return }
            entered.signal()
            _ = eventually(timeout: 30) { stopping.load(ordering: .relaxed) }
            whileStopping()
            returned.store(true, ordering: .relaxed)
        }
    }

    /// Runs `stop` on a thread of its own; whether the delegate had returned when it did (nil:
    /// it did not return within a minute — a deadlock).
    func stopped(by stop: @escaping @Sendable () -> Void, _ delegate: Interloper) -> Bool? {
        let done = DispatchSemaphore(value: 0)
        let delegateHadReturned = Atomic<Bool>(false)
        Thread.detachNewThread {
            delegate.stopping.store(true, ordering: .relaxed)
            stop()
            delegateHadReturned.store(delegate.returned.load(ordering: .relaxed), ordering: .relaxed)
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success else { return nil }
        return delegateHadReturned.load(ordering: .relaxed)
    }

    @Test("a delegate that stops the session while another thread stops it: both return, the other after the delegate")
    func delegateStopsDuringStop() throws {
        let session = Mutex<CaptureSession?>(nil)
        let delegate = Interloper {
            // By now the other thread has taken the session's pipeline away, or soon will.
            _ = eventually(timeout: 30) { session.withLock { $0 }.map { !$0.isRunning } ?? true }
            session.withLock { $0 }?.stopRunning()
        }
        let (running, output) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: delegate)
        session.withLock { $0 = running }
        try running.startRunning()
        delegate.entered.wait()
        #expect(stopped(by: { running.stopRunning() }, delegate) == true)
        #expect(output.counts.isBalanced)
        session.withLock { $0 = nil }
    }

    @Test("a MultiCamSession delegate that stops it while another thread stops it: both return, the other after the delegate")
    func multiCamDelegateStopsDuringStop() throws {
        let multi = MultiCamSession()
        let delegate = Interloper { [multi] in
            _ = eventually(timeout: 30) { multi.cameraSessions.isEmpty }
            multi.stopRunning()
        }
        let output = VideoDataOutput()
        output.setSampleBufferDelegate(delegate)
        let input = try CaptureDeviceInput(device: .virtualCamera)
        try multi.configure {
            try multi.setSessionPreset(.cif352x288)
            try multi.addInputWithNoConnections(input)
            try multi.addOutputWithNoConnections(output)
            try multi.addConnection(from: input, to: output)
        }
        try multi.startRunning()
        delegate.entered.wait()
        #expect(stopped(by: { multi.stopRunning() }, delegate) == true)
        #expect(output.counts.isBalanced)
    }

    @Test("stopRunning() waits for a delegate that takes longer than any timeout (6 s), so counts balance on return")
    func stopWaitsForSlowDelegate() throws {
        let delegate = Interloper { Thread.sleep(forTimeInterval: 6) }
        let (session, output) = try makeSession(.virtualCamera, preset: .cif352x288, recorder: delegate)
        try session.startRunning()
        delegate.entered.wait()
        #expect(stopped(by: { session.stopRunning() }, delegate) == true)
        #expect(output.counts.isBalanced && output.counts.pending == 0)
    }

    @Test("a photo delegate that stops the session from its callback does not wait for its own queue")
    func photoDelegateStops() throws {
        final class Stopper: PhotoCaptureDelegate {
            let session = Mutex<CaptureSession?>(nil)
            let done = DispatchSemaphore(value: 0)
            let photo = Atomic<Bool>(false)
            func photoOutput(_ output: PhotoOutput, didFinishProcessingPhoto photo: Photo?, error: CaptureError?) {
                self.photo.store(photo != nil, ordering: .relaxed)
                session.withLock { $0 }?.stopRunning()
                done.signal()
            }
        }
        let photos = PhotoOutput()
        let session = try virtualSession(outputs: [photos])
        let stopper = Stopper()
        stopper.session.withLock { $0 = session }
        try session.startRunning()
        photos.capturePhoto(with: PhotoSettings(), delegate: stopper)
        #expect(stopper.done.wait(timeout: .now() + 60) == .success)
        let tookPhoto = stopper.photo.load(ordering: .relaxed)
        #expect(tookPhoto)
        #expect(eventually { !session.isRunning })
        stopper.session.withLock { $0 = nil }
    }

    @Test("a task iterating sampleBuffers that is cancelled ends its iteration while the session runs")
    func cancelledIteration() async throws {
        // A camera that delivers nothing: the iteration waits until cancelled.
        let kernel = FakeKernel()
        let (session, output) = try makeSession(try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: Recorder())
        try session.startRunning()
        defer { session.stopRunning() }
        let ended = Atomic<Bool>(false)
        let iteration = Task {
            var frames = 0
            for try await _ in output.sampleBuffers { frames += 1 }
            ended.store(true, ordering: .relaxed)
            return frames
        }
        iteration.cancel()
        // Bounded, so that an iteration deaf to cancellation fails the test instead of hanging it.
        for _ in 0..<6000 where !ended.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(10)) }
        let hasEnded = ended.load(ordering: .relaxed)
        #expect(hasEnded)
        guard hasEnded else { return }
        #expect(try await iteration.value == 0)
        #expect(session.isRunning)
        // The frames go on to the next consumer.
        kernel.setScript([.frame(sequence: 0)])
        for try await frame in output.sampleBuffers {
            #expect(frame.sequenceNumber == 0)
            break
        }
    }

    @Test("sampleBuffers runs the output's processors on its delegate queue, not on Swift's cooperative pool")
    func processorsOnDelegateQueue() async throws {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "test.delegate-queue")
        queue.setSpecific(key: key, value: 1)
        final class Where: Processor {
            let key: DispatchSpecificKey<Int>
            let onQueue = Mutex<[Bool]>([])
            init(key: DispatchSpecificKey<Int>) { self.key = key }
            var name: String { "where" }
            func process(_ frame: inout SampleBuffer) throws { onQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) == 1) } }
        }
        let probe = Where(key: key)
        let output = VideoDataOutput()
        output.setSampleBufferDelegate(nil, queue: queue)
        output.processors = ProcessorChain([probe])
        let session = try virtualSession(outputs: [output])
        try session.startRunning()
        defer { session.stopRunning() }
        var seen = 0
        for try await _ in output.sampleBuffers {
            seen += 1
            if seen == 3 { break }
        }
        // (Frames after the loop go to the delegate's side, also on the queue.)
        let onQueue = probe.onQueue.withLock { $0 }
        #expect(onQueue.count >= 3 && onQueue.allSatisfy { $0 }, "\(onQueue)")
    }
}
