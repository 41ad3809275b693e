import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// A source brought by a program, through FrameCapture's public `FrameSource` and
/// `FrameSourceFactory` (as a GStreamer appsink or a network camera's SDK would be): no
/// change to FrameCapture, every session feature as for its own sources.
@Suite("A source defined outside FrameCapture")
struct CustomSourceTests {
    /// Gray frames whose luma is their number, `count` of them, then the end; a corrupt one
    /// among them is reported as a drop.
    final class CountingSource: FrameSource {
        let configuration: SourceConfiguration
        let isRealTime = false
        private let count: Int
        private let corrupt: Int?
        private var index = 0
        private let pool: BufferPool
        private let onRead: (@Sendable () -> Void)?
        init(configuration: SourceConfiguration, count: Int, corrupt: Int?, onRead: (@Sendable () -> Void)? = nil) throws(CaptureError) {
            self.configuration = configuration
            self.count = count
            self.corrupt = corrupt
            self.onRead = onRead
            let size = configuration.format.size
            do {
                pool = try BufferPool(width: size.width, height: size.height, format: .gray8, capacity: configuration.bufferCount)
            } catch {
                throw .configuration("\(error)")
            }
        }
        func start() throws(CaptureError) {}
        func next() throws(CaptureError) -> SourceEvent {
            onRead?()
            guard index < count else { return .endOfStream }
            let time = Double(index) / configuration.frameRate
            if index == corrupt {
                defer { index += 1 }
                return .dropped(DroppedFrame(sequenceNumber: UInt64(index), presentationTime: time, reason: .corrupt))
            }
            guard var buffer = pool.makeBuffer(waitingUpTo: 1) else { return .idle }
            defer { index += 1 }
            let luma = UInt8(truncatingIfNeeded: index)
            _ = buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in bytes.initializeMemory(as: UInt8.self, repeating: luma) }
            return .frame(SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: UInt64(index), captureInstant: .now()))
        }
        func stop() {}
        func usageReporter() -> @Sendable () -> BufferPool.Usage { { [pool] in pool.usage } }
    }

    final class Counting: FrameSourceFactory {
        let count: Int
        let corrupt: Int?
        let made = Mutex(0)
        let onRead: (@Sendable () -> Void)?
        init(count: Int, corrupt: Int?, onRead: (@Sendable () -> Void)? = nil) {
            self.count = count
            self.corrupt = corrupt
            self.onRead = onRead
        }
        var isRealTime: Bool { false }
        func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
            made.withLock { $0 += 1 }
            return try CountingSource(configuration: configuration, count: count, corrupt: corrupt, onRead: onRead)
        }
    }

    @Test("a program's own source runs in a session: every frame delivered in order, its drop reported, its end a notification")
    func customSource() throws {
        let factory = Counting(count: 12, corrupt: 5)
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "counting", localizedName: "Counting source", deviceType: .file, modelID: "test", formats: [format], source: factory)
        #expect(!device.isPaced && device.hasFixedSize)
        let recorder = Recorder(keepPixels: true)
        let (session, output) = try makeSession(device, preset: .high, recorder: recorder, format: .bgra32, discardsLate: false)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(log.wait { if case .sourceEnded = $0 { true } else { false } } != nil)
        #expect(recorder.wait { $0.frames.count == 11 })
        session.stopRunning()
        #expect(recorder.frames.map(\.sequenceNumber) == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11])
        #expect(recorder.drops.map(\.sequenceNumber) == [5] && recorder.drops(.corrupt) == 1)
        // Converted by the output like any source's frames: gray 7 is BGRA (7, 7, 7, 255).
        let seventh = try #require(recorder.frames.first { $0.sequenceNumber == 7 })
        #expect(seventh.pixelBuffer.format == .bgra32)
        #expect(seventh.pixelBuffer.withUnsafeBytes(ofPlane: 0) { b, _ in Array(b.prefix(4)) } == [7, 7, 7, 255])
        #expect(output.counts.isBalanced && output.counts.delivered == 11)
        #expect(factory.made.withLock { $0 } == 1)
    }

    /// Throws on every third frame: a processor whose work failed.
    final class FailingEveryThird: Processor {
        struct Failure: Error, CustomStringConvertible {
            var frame: UInt64
            var description: String { "the network could not run on frame \(frame)" }
        }
        var name: String { "failing" }
        func process(_ frame: inout SampleBuffer) throws {
            if frame.sequenceNumber % 3 == 2 { throw Failure(frame: frame.sequenceNumber) }
        }
    }

    @Test("a processor that throws drops its frame as processing_failed with what it threw, never as corrupt; the counts balance")
    func processingFailed() throws {
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "counting-failing", localizedName: "Counting source", deviceType: .file, modelID: "test", formats: [format],
            source: Counting(count: 9, corrupt: nil))
        let recorder = Recorder()
        let (session, output) = try makeSession(device, preset: .high, recorder: recorder, discardsLate: false)
        output.processors = ProcessorChain([FailingEveryThird()])
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(log.wait { if case .sourceEnded = $0 { true } else { false } } != nil)
        #expect(recorder.wait { $0.frames.count + $0.drops.count == 9 })
        session.stopRunning()
        #expect(recorder.frames.map(\.sequenceNumber) == [0, 1, 3, 4, 6, 7])
        #expect(recorder.drops.map(\.reason) == [.processingFailed, .processingFailed, .processingFailed])
        #expect(recorder.drops.map(\.failure) == [2, 5, 8].map { "the network could not run on frame \($0)" })
        #expect(output.counts.dropped(.processingFailed) == 3 && output.counts.dropped(.corrupt) == 0 && output.counts.isBalanced)
        // Each failure followed a frame that did not fail: each is posted, with what was thrown.
        func failures() -> [DroppedFrame] { log.all.compactMap { if case .processingFailed(let drop) = $0 { drop } else { nil } } }
        _ = log.wait { _ in failures().count == 3 }
        #expect(failures().map(\.sequenceNumber) == [2, 5, 8] && failures().allSatisfy { $0.failure?.contains("could not run") == true })
    }

    /// Throws on the frames given.
    final class FailingOn: Processor {
        let frames: Set<UInt64>
        init(_ frames: Set<UInt64>) { self.frames = frames }
        var name: String { "failing" }
        func process(_ frame: inout SampleBuffer) throws {
            if frames.contains(frame.sequenceNumber) { throw FailingEveryThird.Failure(frame: frame.sequenceNumber) }
        }
    }

    @Test("a run of processing failures is one processingFailed notification, posted again only after a frame that did not fail")
    func processingFailedNotices() throws {
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "counting-failing-runs", localizedName: "Counting source", deviceType: .file, modelID: "test", formats: [format],
            source: Counting(count: 10, corrupt: nil))
        let recorder = Recorder()
        let (session, output) = try makeSession(device, preset: .high, recorder: recorder, discardsLate: false)
        output.processors = ProcessorChain([FailingOn([2, 3, 4, 7, 8])])
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(recorder.wait { $0.frames.count + $0.drops.count == 10 })
        session.stopRunning()
        func failures() -> [UInt64] { log.all.compactMap { if case .processingFailed(let drop) = $0 { drop.sequenceNumber } else { nil } } }
        _ = log.wait { _ in failures().count >= 2 }
        #expect(failures() == [2, 7], "\(failures())")
        #expect(output.counts.dropped(.processingFailed) == 5)
    }

    @Test("a task that starts iterating after startRunning() gets every frame of a source read as fast as consumed; none go to nobody")
    func lateIterationLosesNothing() async throws {
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "counting-late", localizedName: "Counting source", deviceType: .file, modelID: "test", formats: [format],
            source: Counting(count: 10, corrupt: nil))
        let output = VideoDataOutput() // no delegate: the task below is the only consumer
        let session = try virtualSessionLike(device, output)
        try session.startRunning()
        // A program that does something else first: the source must wait for it, not deliver
        // its first frames to nobody (the capture-only consumer of scripts/test-consumer lost
        // its first frame so, once in CI).
        try await Task.sleep(for: .milliseconds(300))
        var numbers: [UInt64] = []
        for try await frame in output.sampleBuffers { numbers.append(frame.sequenceNumber) }
        session.stopRunning()
        #expect(numbers == Array(0..<10))
        #expect(output.counts.delivered == 10 && output.counts.isBalanced)
    }

    /// A consumer that takes 50 ms a frame (a detector's pass), counting the callbacks it has
    /// started and finished.
    final class SlowConsumer: VideoDataOutputSampleBufferDelegate {
        let state = Mutex((started: 0, finished: 0, overlapping: 0, sequence: [UInt64]()))
        func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
            state.withLock {
                if $0.started > $0.finished { $0.overlapping += 1 }
                $0.started += 1
                $0.sequence.append(frame.sequenceNumber)
            }
            Thread.sleep(forTimeInterval: 0.05)
            state.withLock { $0.finished += 1 }
        }
    }

    @Test("a source read as fast as consumed reads its next frame while the consumer is still at work on the last")
    func readsAheadOfTheConsumer() throws {
        // Each read notes whether the consumer had finished the frame before the one it reads.
        // Reading only once the consumer was done put the source's decoding between frames, on
        // the consumer's time.
        let consumer = SlowConsumer()
        let reads = Mutex((count: 0, ahead: 0))
        let factory = Counting(count: 8, corrupt: nil) {
            let finished = consumer.state.withLock { $0.finished }
            reads.withLock {
                if $0.count > 0 && finished < $0.count { $0.ahead += 1 }
                $0.count += 1
            }
        }
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "counting-ahead", localizedName: "Counting source", deviceType: .file, modelID: "test", formats: [format],
            source: factory)
        let (session, output) = try makeSession(device, preset: .high, recorder: consumer, discardsLate: false)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(log.wait(timeout: 10) { if case .sourceEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
        let seen = consumer.state.withLock { $0 }
        // Every frame, in order, none dropped, one at a time: reading ahead holds a frame, it
        // does not replace one.
        #expect(seen.sequence == Array(0..<8) && seen.overlapping == 0)
        #expect(output.counts.isBalanced && output.counts.delivered == 8 && output.counts.droppedTotal == 0)
        // Reads 1…7 and the end, each made while the frame before was in the consumer's 50 ms (a
        // busy machine may be late to a few of them, never to most).
        #expect(reads.withLock { $0.ahead } >= 4, "\(reads.withLock { $0 })")
    }

    /// A frame, `drops` discontinuity drops (a jump in a stream's timestamps), a frame, the end.
    final class JumpSource: FrameSource {
        let configuration: SourceConfiguration
        let isRealTime = false
        let drops: Int
        private var index = 0
        private let pool: BufferPool
        init(configuration: SourceConfiguration, drops: Int) throws(CaptureError) {
            self.configuration = configuration
            self.drops = drops
            do {
                pool = try BufferPool(width: 64, height: 48, format: .gray8, capacity: configuration.bufferCount)
            } catch {
                throw .configuration("\(error)")
            }
        }
        func start() throws(CaptureError) {}
        func next() throws(CaptureError) -> SourceEvent {
            defer { index += 1 }
            let time = Double(index) / 30
            switch index {
            case 0, drops + 1:
                guard let buffer = pool.makeBuffer(waitingUpTo: 1) else { return .idle }
                return .frame(
                    SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: UInt64(index), captureInstant: .now()))
            case 1...drops: return .dropped(DroppedFrame(sequenceNumber: UInt64(index), presentationTime: time, reason: .discontinuity))
            default: return .endOfStream
            }
        }
        func stop() {}
        func usageReporter() -> @Sendable () -> BufferPool.Usage { { [pool] in pool.usage } }
    }

    final class Jumps: FrameSourceFactory {
        let drops: Int
        init(drops: Int) { self.drops = drops }
        var isRealTime: Bool { false }
        func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
            try JumpSource(configuration: configuration, drops: drops)
        }
    }

    /// Holds the first frame until `gate` opens; records every frame and drop in order.
    final class GatedRecorder: VideoDataOutputSampleBufferDelegate, Sendable {
        let gate = DispatchSemaphore(value: 0)
        let seen = Mutex<[String]>([])
        func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
            if frame.sequenceNumber == 0 { gate.wait() }
            seen.withLock { $0.append("f\(frame.sequenceNumber)") }
        }
        func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
            seen.withLock { $0.append("d\(frame.sequenceNumber)") }
        }
    }

    @Test(
        "a source read as fast as consumed hands a run of drops on without waiting for the consumer (a wait before each cost two thread switches a drop, and a jump is up to 10,000), in order, every one reported"
    )
    func dropRunDoesNotWaitForTheConsumer() throws {
        let format = CaptureDeviceFormat(
            fourCC: "GREY", pixelFormat: .gray8, isCompressed: false, size: FrameSize(width: 64, height: 48), frameRates: [30])
        let device = CaptureDevice(
            uniqueID: "jump", localizedName: "Jumping source", deviceType: .file, modelID: "test", formats: [format],
            source: Jumps(drops: 5000))
        let recorder = GatedRecorder()
        let (session, output) = try makeSession(device, preset: .high, recorder: recorder, discardsLate: false)
        let log = NotificationLog(session)
        try session.startRunning()
        // The consumer holds the first frame: the drops behind it reach the output all the same
        // (they waited, one by one, for the consumer to be done with everything before them).
        #expect(eventually(timeout: 30) { output.counts.captured >= 5001 }, "\(output.counts)")
        recorder.gate.signal()
        #expect(log.wait(timeout: 30) { if case .sourceEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
        let seen = recorder.seen.withLock { $0 }
        #expect(seen == ["f0"] + (1...5000).map { "d\($0)" } + ["f5001"], "\(seen.prefix(3)) … \(seen.suffix(3)) (\(seen.count))")
        #expect(output.counts.isBalanced && output.counts.dropped(.discontinuity) == 5000 && output.counts.delivered == 2)
    }

    func virtualSessionLike(_ device: CaptureDevice, _ output: VideoDataOutput) throws -> CaptureSession {
        try session(CaptureDeviceInput(device: device), preset: .high, outputs: [output])
    }
}
