import Dispatch
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// The session's promises under misuse and concurrency (#14): each case failed before.
@Suite("CaptureSession keeps its promises")
struct SessionPromiseTests {
    @Test("a configure {} body that throws half-way changes nothing")
    func configureIsAllOrNothing() throws {
        let session = CaptureSession()
        let output = VideoDataOutput()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: .virtualCamera))
                try session.addOutput(output)
                throw Stop()
            }
        }
        #expect(session.inputs.isEmpty && session.outputs.isEmpty, "the half-done part was committed")
        // A nested body that throws is undone too; the outer one's own changes stay.
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
            try? session.configure {
                try session.addOutput(output)
                throw Stop()
            }
        }
        #expect(session.inputs.count == 1 && session.outputs.isEmpty)
    }

    @Test("stopRunning() inside a configuration stops capture when it is committed")
    func stopInsideConfiguration() throws {
        let session = CaptureSession()
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
            try session.setSessionPreset(.vga640x480)
            try session.addOutput(VideoDataOutput())
        }
        try session.startRunning()
        session.beginConfiguration()
        session.stopRunning()
        #expect(session.isRunning, "still running until the commit")
        try session.commitConfiguration()
        #expect(!session.isRunning)
    }

    @Test("an output belongs to one session: adding it to a second is an error")
    func oneSessionPerOutput() throws {
        let output = VideoDataOutput()
        let a = CaptureSession()
        let b = CaptureSession()
        try a.addOutput(output)
        #expect(throws: CaptureError.self) { try b.addOutput(output) }
        a.removeOutput(output)
        try b.addOutput(output)
        #expect(b.outputs.count == 1 && a.outputs.isEmpty)
    }

    @Test("eight threads adding and removing outputs at once lose no change")
    func concurrentMutation() throws {
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: .virtualCamera))
        try session.setSessionPreset(.vga640x480)
        try session.startRunning()
        defer { session.stopRunning() }
        let outputs = (0..<8).map { _ in VideoDataOutput() }
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            for _ in 0..<5 {
                try? session.addOutput(outputs[i])
                session.removeOutput(outputs[i])
            }
            try? session.addOutput(outputs[i])
        }
        #expect(session.outputs.count == 8, "\(session.outputs.count) of 8 outputs survived")
    }

    func running(_ output: VideoDataOutput, preset: SessionPreset = .cif352x288) throws -> CaptureSession {
        let session = CaptureSession()
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: .virtualCamera))
            try session.setSessionPreset(preset)
            try session.addOutput(output)
        }
        try session.startRunning()
        return session
    }

    @Test("a second task iterating the same output's frames gets an error, never a hang or a leaked continuation")
    func twoConsumers() async throws {
        let output = VideoDataOutput()
        let session = try running(output)
        defer { session.stopRunning() }
        // The first consumer says when it is iterating, and iterates until the second has been
        // refused (a 0.2 s sleep assumed it had started; on a starved pool it had not).
        let (started, startedSignal) = AsyncStream<Void>.makeStream()
        let refused = Atomic(false)
        let first = Task { () -> Int in
            defer { startedSignal.finish() } // ended before its first frame: the test goes on, and fails below
            var n = 0
            for try await _ in output.sampleBuffers {
                n += 1
                if n == 1 { startedSignal.yield() }
                if n >= 20 && refused.load(ordering: .acquiring) { break }
            }
            return n
        }
        for await _ in started { break }
        await #expect(throws: CaptureError.self) {
            for try await _ in output.sampleBuffers { break }
        }
        refused.store(true, ordering: .releasing)
        #expect(try await first.value >= 20)
        // Once the first has finished, another task may iterate.
        var again = 0
        for try await _ in output.sampleBuffers {
            again += 1
            if again == 3 { break }
        }
        #expect(again == 3)
    }

    @Test("cancelling a consumer slower than the source ends its loop at the next frame, frames queued or not")
    func cancelSlowConsumer() async throws {
        let output = VideoDataOutput()
        let session = try running(output)
        defer { session.stopRunning() }
        let consumer = Task { () -> Int in
            var n = 0
            for try await _ in output.sampleBuffers {
                n += 1
                if n == 5 { withUnsafeCurrentTask { $0?.cancel() } }
                if n == 25 { break } // the loop that ignored the cancel: fails below, rather than running on
                // The consumer's work: two frame times at 30 fps, so a frame is queued when it asks
                // for the next (before the fix, the loop went on through the queue forever).
                usleep(66_000)
            }
            return n
        }
        #expect(try await consumer.value == 5)
    }

    @Test("reading sampleBuffers without iterating does not switch the delegate off")
    func readingIsNotIterating() throws {
        let output = VideoDataOutput()
        let recorder = Recorder()
        output.setSampleBufferDelegate(recorder)
        _ = output.sampleBuffers
        let session = try running(output)
        defer { session.stopRunning() }
        #expect(recorder.wait(timeout: 5) { $0.frames.count >= 5 })
    }

    @Test("a slow async consumer's drops are reported (droppedFrames and the delegate's didDrop), the counts balance")
    func asyncDropsReported() async throws {
        let output = VideoDataOutput()
        let recorder = Recorder()
        output.setSampleBufferDelegate(recorder)
        let drops = Task { () -> Int in
            var n = 0
            for await drop in output.droppedFrames where drop.reason == .frameWasLate {
                n += 1
                if n == 3 { break }
            }
            return n
        }
        let session = try running(output)
        var taken: [UInt64] = []
        for try await frame in output.sampleBuffers {
            taken.append(frame.sequenceNumber)
            try await Task.sleep(nanoseconds: 100_000_000) // three frame times at 30 fps
            if taken.count == 8 { break }
        }
        session.stopRunning()
        #expect(await drops.value == 3)
        #expect(recorder.drops(.frameWasLate) >= 3, "the delegate's didDrop hears of them too")
        // While the task iterated, its frames did not go to didOutput (before and after, they do).
        let toDelegate = Set(recorder.frames.map(\.sequenceNumber))
        #expect(toDelegate.isDisjoint(with: taken))
        #expect(!toDelegate.contains { $0 > taken.first! && $0 < taken.last! })
        #expect(output.counts.isBalanced)
    }

    @Test(
        "droppedFrames ends when the session stops, as sampleBuffers does, after the drops of the stop; a new stream follows the next start"
    )
    func droppedFramesEnd() async throws {
        // A delegate that takes 100 ms a frame, on its own queue: drops as late without
        // depending on the concurrency pool (a parallel suite starves it, and an async consumer
        // then saw one frame in 20 s).
        final class Slow: VideoDataOutputSampleBufferDelegate {
            func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        let output = VideoDataOutput()
        output.setSampleBufferDelegate(Slow())
        let dropStream = output.droppedFrames // before the start: it hears every drop
        let drops = Task { () -> Int in
            var n = 0
            for await _ in dropStream { n += 1 }
            return n // reached only when the stream ends
        }
        let session = try running(output)
        // Until frames have been dropped (a busy machine may take a while).
        let deadline = Date().addingTimeInterval(30)
        while output.counts.droppedTotal == 0, Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        session.stopRunning()
        // The stream ends: the task returns (it hung on droppedFrames before).
        let dropped = await drops.value
        #expect(dropped > 0 && dropped == output.counts.droppedTotal, "\(dropped) heard, \(output.counts)")
        // After a restart, a new stream hears the new run's drops.
        let againStream = output.droppedFrames
        let again = Task { () -> Int in
            var n = 0
            for await _ in againStream {
                n += 1
                if n == 2 { break }
            }
            return n
        }
        try session.startRunning()
        #expect(await again.value == 2)
        session.stopRunning()
    }
}
