import Dispatch
import FrameCore
import FramePixels
import Synchronization

/// Receives what a ``VideoDataOutput`` delivers, on the output's delegate queue.
public protocol VideoDataOutputSampleBufferDelegate: AnyObject, Sendable {
    /// A frame, converted to the output's `videoSettings` format, transformed by the connection
    /// and run through the output's ``VideoDataOutput/processors``. It may borrow a driver
    /// buffer: return promptly, and `PixelBuffer/copy()` what you keep.
    func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection)
    /// A frame that was not delivered, and why. Called once per dropped frame.
    func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection)
}

extension VideoDataOutputSampleBufferDelegate {
    public func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection) {}
    public func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {}
}

/// Delivers video frames to a delegate on a serial queue (as AVCaptureVideoDataOutput), or as
/// an `AsyncSequence` (``sampleBuffers``).
///
/// With ``alwaysDiscardsLateVideoFrames`` (the default) a frame that arrives while the
/// consumer is still busy waits in a one-frame slot; a newer frame replaces it and the older
/// one is reported dropped as `frameWasLate`. So a slow consumer always gets the newest
/// frame and never a backlog. Without it, frames queue up to the source's buffer count, and
/// beyond that drop as `outOfBuffers`.
public final class VideoDataOutput: CaptureOutput, FrameSink {
    /// What the output delivers.
    public struct VideoSettings: Sendable, Equatable {
        /// nil: the device's native format (no conversion).
        public var pixelFormat: PixelFormat?
        /// Matrix for Y'CbCr → RGB conversions.
        public var colorMatrix: ColorConversion.Matrix = .bt601
        public init(pixelFormat: PixelFormat? = nil, colorMatrix: ColorConversion.Matrix = .bt601) {
            self.pixelFormat = pixelFormat
            self.colorMatrix = colorMatrix
        }
    }

    enum Event {
        case frame(SampleBuffer)
        case drop(DroppedFrame)
    }

    private struct State {
        var delegate: (any VideoDataOutputSampleBufferDelegate)?
        var queue: DispatchQueue
        var settings = VideoSettings()
        var discardsLate = true
        var processors = ProcessorChain()
        var conversion: ConvertStage?
        let connection = CaptureConnection()
        var counts = OutputCounts()
        // The mailbox between the capture thread and the consumer.
        var events: [Event] = []
        var queuedFrames = 0
        var capacity = 4
        var draining = false
        var waiter: CheckedContinuation<SampleBuffer?, Never>?
        /// A task iterates ``sampleBuffers`` (its iterator's id): frames go to it, not to didOutput.
        var asyncConsumer: UInt64?
        var asyncMode: Bool { asyncConsumer != nil }
        var nextConsumerID: UInt64 = 0
        /// Listeners of ``droppedFrames``.
        var dropListeners: [UInt64: AsyncStream<DroppedFrame>.Continuation] = [:]
        var finished = false
    }

    // SampleBuffers and continuations are Sendable; the delegate is Sendable; so is State.
    private let state: Mutex<State>
    /// Signalled whenever the consumer may have become ready (sources that wait for their
    /// consumer sleep on it rather than spin).
    let readiness = DispatchSemaphore(value: 0)

    public init() {
        let queue = DispatchQueue(label: "framekit.video-data-output", qos: .userInteractive)
        state = Mutex(State(queue: queue))
        Self.mark(queue)
    }

    /// Marks delegate queues, so that ``finish()`` can tell it runs on one (a delegate calling
    /// `stopRunning()`) and must not wait for that queue to drain: it would wait for itself.
    private final class QueueMark {}
    // A key is an identity with no state: immutable after this initialisation, safe to share.
    nonisolated(unsafe) private static let queueKey = DispatchSpecificKey<QueueMark>()
    private static func mark(_ queue: DispatchQueue) {
        if queue.getSpecific(key: queueKey) == nil { queue.setSpecific(key: queueKey, value: QueueMark()) }
    }
    private static func isCurrent(_ queue: DispatchQueue) -> Bool {
        guard let current = DispatchQueue.getSpecific(key: queueKey) else { return false }
        return current === queue.getSpecific(key: queueKey)
    }

    /// Sets the delegate and the serial queue its callbacks run on (nil: a serial queue of
    /// user-interactive QoS). The output keeps a strong reference to the delegate.
    public func setSampleBufferDelegate(_ delegate: (any VideoDataOutputSampleBufferDelegate)?, queue: DispatchQueue? = nil) {
        if let queue { Self.mark(queue) }
        state.withLock { s in
            s.delegate = delegate
            if let queue { s.queue = queue }
        }
    }

    public var sampleBufferDelegate: (any VideoDataOutputSampleBufferDelegate)? { state.withLock { $0.delegate } }
    public var sampleBufferCallbackQueue: DispatchQueue { state.withLock { $0.queue } }

    public var videoSettings: VideoSettings {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    public var alwaysDiscardsLateVideoFrames: Bool {
        get { state.withLock { $0.discardsLate } }
        set { state.withLock { $0.discardsLate = newValue } }
    }

    /// Processors run on each frame, on the delegate queue, before `didOutput`.
    public var processors: ProcessorChain {
        get { state.withLock { $0.processors } }
        set { state.withLock { $0.processors = newValue } }
    }

    /// Every format the output can deliver, native ones first for the connected device.
    public var availableVideoPixelFormatTypes: [PixelFormat] {
        guard let native = state.withLock({ $0.connection.pixelFormat }) else { return PixelFormat.allCases }
        return [native] + PixelFormat.allCases.filter { $0 != native }
    }

    /// The connection to the session's input: its rotation, mirroring and enabled state last
    /// across starts and input swaps.
    public var connection: CaptureConnection? { state.withLock { $0.connection } }

    /// Captured, delivered and dropped frames so far, by reason.
    public var counts: OutputCounts { state.withLock { $0.counts } }

    // MARK: Session side (capture thread)

    func validate(nativeFormat: PixelFormat) throws(CaptureError) {
        let (connection, delivered) = state.withLock { s in (s.connection, s.settings.pixelFormat ?? nativeFormat) }
        try connection.validate(deliveredFormat: delivered)
    }

    func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) {
        state.withLock { s in
            s.connection.pixelFormat = s.settings.pixelFormat ?? nativeFormat
            s.capacity = max(1, capacity)
            s.finished = false
        }
    }

    /// Whether the consumer can take a frame now (sources that wait for their consumer ask).
    var isReadyForMoreFrames: Bool {
        state.withLock { s in s.queuedFrames == 0 && (s.asyncMode ? s.waiter != nil : !s.draining) }
    }

    func receive(_ frame: SampleBuffer) {
        enum Action {
            case none
            case drain(DispatchQueue)
            case resume(CheckedContinuation<SampleBuffer?, Never>)
            case report([DroppedFrame], @Sendable (VideoDataOutput, [DroppedFrame]) -> Void)
        }
        let action: Action = state.withLock { s in
            guard s.connection.isEnabled else { return .none }
            s.counts.captured += 1
            s.counts.pending += 1
            if s.asyncMode, let waiter = s.waiter {
                s.waiter = nil
                return .resume(waiter)
            }
            if s.discardsLate, let slot = s.events.lastIndex(where: { if case .frame = $0 { true } else { false } }) {
                // The newest frame wins; the waiting one is late.
                if case .frame(let late) = s.events[slot] {
                    s.events[slot] = .drop(
                        DroppedFrame(
                            sequenceNumber: late.sequenceNumber, presentationTime: late.presentationTime,
                            reason: .frameWasLate))
                }
                s.counts.pending -= 1
                s.counts.dropped[.frameWasLate, default: 0] += 1
                s.events.append(.frame(frame))
            } else if !s.discardsLate && s.queuedFrames >= s.capacity {
                s.counts.pending -= 1
                s.counts.dropped[.outOfBuffers, default: 0] += 1
                s.events.append(
                    .drop(
                        DroppedFrame(
                            sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime,
                            reason: .outOfBuffers)))
            } else {
                s.events.append(.frame(frame))
                s.queuedFrames += 1
            }
            if s.asyncMode {
                let drops = s.events.compactMap { if case .drop(let d) = $0 { d } else { nil } }
                s.events.removeAll { if case .drop = $0 { true } else { false } }
                if !drops.isEmpty { return .report(drops, Self.dropReport(&s)) }
            }
            return scheduleDrain(&s).map { .drain($0) } ?? .none
        }
        switch action {
        case .none: break
        case .drain(let queue): queue.async { self.drain() }
        case .resume(let waiter): waiter.resume(returning: frame)
        case .report(let drops, let report): report(self, drops)
        }
    }

    func receive(drop: DroppedFrame) {
        enum Action {
            case none
            case drain(DispatchQueue)
            case report(@Sendable (VideoDataOutput, [DroppedFrame]) -> Void)
        }
        let action: Action = state.withLock { s in
            guard s.connection.isEnabled else { return .none }
            s.counts.captured += 1
            s.counts.dropped[drop.reason, default: 0] += 1
            guard !s.asyncMode else { return .report(Self.dropReport(&s)) }
            s.events.append(.drop(drop))
            return scheduleDrain(&s).map { .drain($0) } ?? .none
        }
        switch action {
        case .none: break
        case .drain(let queue): queue.async { self.drain() }
        case .report(let report): report(self, [drop])
        }
    }

    /// How drops reach their listeners when a task iterates the frames: the delegate's
    /// didDrop on its queue (the frames go to the task, the drops are still reported there),
    /// and every ``droppedFrames`` stream.
    private static func dropReport(_ s: inout State) -> @Sendable (VideoDataOutput, [DroppedFrame]) -> Void {
        let delegate = s.delegate
        let queue = s.queue
        let listeners = Array(s.dropListeners.values)
        let link = s.connection
        return { output, drops in
            for drop in drops { for listener in listeners { listener.yield(drop) } }
            if let delegate { queue.async { for drop in drops { delegate.captureOutput(output, didDrop: drop, from: link) } } }
        }
    }

    /// The queue to start draining on, if no drain is under way.
    private func scheduleDrain(_ s: inout State) -> DispatchQueue? {
        guard !s.asyncMode, !s.draining, !s.events.isEmpty else { return nil }
        s.draining = true
        return s.queue
    }

    /// Runs on the delegate queue until the mailbox is empty.
    private func drain() {
        while true {
            let next: (Event, (any VideoDataOutputSampleBufferDelegate)?, CaptureConnection)? = state.withLock { s in
                guard !s.events.isEmpty else {
                    s.draining = false
                    readiness.signal()
                    return nil
                }
                let event = s.events.removeFirst()
                if case .frame = event { s.queuedFrames -= 1 }
                return (event, s.delegate, s.connection)
            }
            guard let (event, delegate, connection) = next else { return }
            let link = connection
            switch event {
            case .drop(let frame):
                yieldToListeners(frame)
                delegate?.captureOutput(self, didDrop: frame, from: link)
            case .frame(let frame):
                switch prepare(frame) {
                case .success(let ready):
                    state.withLock { s in
                        s.counts.pending -= 1
                        s.counts.delivered += 1
                    }
                    delegate?.captureOutput(self, didOutput: ready, from: link)
                case .failure(let drop):
                    yieldToListeners(drop)
                    delegate?.captureOutput(self, didDrop: drop, from: link)
                }
            }
        }
    }

    /// Conversion, connection transforms and processors; a failure counts the frame corrupt.
    private enum Prepared {
        case success(SampleBuffer)
        case failure(DroppedFrame)
    }
    private func prepare(_ frame: SampleBuffer) -> Prepared {
        let (conversion, processors, connection) = state.withLock { s -> (ConvertStage?, ProcessorChain, CaptureConnection) in
            guard let target = s.settings.pixelFormat, target != frame.pixelBuffer.format else { return (nil, s.processors, s.connection) }
            // One stage per target, so its output buffer is reused frame after frame.
            if s.conversion?.format != target || s.conversion?.matrix != s.settings.colorMatrix {
                s.conversion = ConvertStage(to: target, matrix: s.settings.colorMatrix)
            }
            return (s.conversion, s.processors, s.connection)
        }
        var ready = frame
        do {
            try conversion?.process(&ready)
            try connection.apply(to: &ready)
            try processors.run(&ready)
            return .success(ready)
        } catch {
            state.withLock { s in
                s.counts.pending -= 1
                s.counts.dropped[.corrupt, default: 0] += 1
            }
            return .failure(DroppedFrame(sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime, reason: .corrupt))
        }
    }

    // MARK: Async consumption

    private func yieldToListeners(_ drop: DroppedFrame) {
        let listeners = state.withLock { Array($0.dropListeners.values) }
        for listener in listeners { listener.yield(drop) }
    }

    /// Every dropped frame, with its reason, as an `AsyncSequence` (from now on, until the
    /// stream is dropped): the same drops, counted the same way, as the delegate's didDrop.
    public var droppedFrames: AsyncStream<DroppedFrame> {
        AsyncStream { continuation in
            let id = state.withLock { s -> UInt64 in
                s.nextConsumerID += 1
                s.dropListeners[s.nextConsumerID] = continuation
                return s.nextConsumerID
            }
            continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.dropListeners.removeValue(forKey: id) } }
        }
    }

    /// The frames as an `AsyncSequence` (`for try await frame in output.sampleBuffers`). While a
    /// task iterates, frames go to it instead of the delegate's didOutput (the delegate, if any,
    /// still gets didDrop; so does ``droppedFrames``); when the iteration ends or is abandoned,
    /// frames go to the delegate again. Late frames are dropped exactly as for a delegate (a
    /// consumer is "busy" between two calls to `next()`). One task at a time: a second
    /// iterating at once gets ``CaptureError/configuration(_:)`` from `next()`, never a hang.
    /// The sequence ends when the session stops.
    public var sampleBuffers: SampleBufferSequence { SampleBufferSequence(output: self) }

    public struct SampleBufferSequence: AsyncSequence, Sendable {
        public typealias Element = SampleBuffer
        let output: VideoDataOutput
        public struct AsyncIterator: AsyncIteratorProtocol {
            let registration: Registration
            public mutating func next() async throws -> SampleBuffer? {
                try await registration.output.nextForAsyncConsumer(registration.id)
            }
        }
        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(registration: Registration(output: output)) }
    }

    /// One iterator's claim on the frames, given up when the iterator goes away.
    final class Registration: Sendable {
        let output: VideoDataOutput
        let id: UInt64
        init(output: VideoDataOutput) {
            self.output = output
            id = output.state.withLock { s in
                s.nextConsumerID += 1
                return s.nextConsumerID
            }
        }
        deinit { output.release(consumer: id) }
    }

    private func release(consumer id: UInt64) {
        let waiter = state.withLock { s -> CheckedContinuation<SampleBuffer?, Never>? in
            guard s.asyncConsumer == id else { return nil }
            s.asyncConsumer = nil
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    func nextForAsyncConsumer(_ id: UInt64) async throws(CaptureError) -> SampleBuffer? {
        let claimed = state.withLock { s -> Bool in
            if s.asyncConsumer == nil {
                s.asyncConsumer = id
                // Frames queued for the delegate stay the delegate's; drops queued so far too.
            }
            return s.asyncConsumer == id
        }
        guard claimed else {
            throw .configuration("another task already iterates this output's sampleBuffers; use one consumer per output")
        }
        while true {
            let raw: SampleBuffer? = await withCheckedContinuation { continuation in
                let immediate: SampleBuffer?? = state.withLock { s in
                    if let index = s.events.firstIndex(where: { if case .frame = $0 { true } else { false } }),
                        case .frame(let frame) = s.events.remove(at: index)
                    {
                        s.queuedFrames -= 1
                        return .some(frame)
                    }
                    if s.finished || s.asyncConsumer != id { return .some(nil) }
                    s.waiter = continuation
                    readiness.signal()
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
            guard let raw else { return nil }
            switch prepare(raw) {
            case .success(let ready):
                state.withLock { s in
                    s.counts.pending -= 1
                    s.counts.delivered += 1
                }
                return ready
            case .failure(let drop):
                // A corrupt frame: reported like any drop, then the next one.
                let report = state.withLock { Self.dropReport(&$0) }
                report(self, [drop])
                continue
            }
        }
    }

    /// The session stopped: end async iteration and wait (bounded) for queued frames to reach
    /// the delegate, so the counts balance.
    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<SampleBuffer?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
        // Let the delegate have what is queued before the session reports it stopped, unless
        // the delegate itself is stopping the session (then the rest follows its return).
        let queue = state.withLock { $0.queue }
        if !Self.isCurrent(queue) {
            let done = DispatchSemaphore(value: 0)
            queue.async { done.signal() }
            _ = done.wait(timeout: .now() + 5)
        }
        // Frames an async consumer never asked for are late: counted and reported as such.
        let (late, report) = state.withLock { s -> ([DroppedFrame], (@Sendable (VideoDataOutput, [DroppedFrame]) -> Void)?) in
            let left = s.events.compactMap { if case .frame(let f) = $0 { f } else { nil } }
            guard s.asyncMode && !left.isEmpty else { return ([], nil) }
            s.events.removeAll()
            s.queuedFrames = 0
            s.counts.pending -= left.count
            s.counts.dropped[.frameWasLate, default: 0] += left.count
            let drops = left.map {
                DroppedFrame(sequenceNumber: $0.sequenceNumber, presentationTime: $0.presentationTime, reason: .frameWasLate)
            }
            return (drops, Self.dropReport(&s))
        }
        report?(self, late)
    }
}
