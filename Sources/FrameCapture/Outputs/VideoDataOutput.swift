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

/// What a ``VideoDataOutput`` delivers (its ``VideoDataOutput/videoSettings``), by its short name:
/// `VideoSettings(pixelFormat: .bgra32)`.
public typealias VideoSettings = VideoDataOutput.VideoSettings

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

    struct State {
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
        /// The running session's notifications.
        var notices: (@Sendable (SessionNotification) -> Void)? = nil
    }

    // SampleBuffers and continuations are Sendable; the delegate is Sendable; so is State.
    // Internal, not private, only for this type's own files (VideoDataOutput+AsyncFrames.swift).
    let state: Mutex<State>
    /// Whether the last frame prepared failed in a processor: a run of failures is posted once
    /// (``SessionNotification/processingFailed(_:)``).
    private let failing = Atomic<Bool>(false)
    /// Signalled whenever the consumer may have become ready (sources that wait for their
    /// consumer sleep on it rather than spin).
    package let readiness = DispatchSemaphore(value: 0)

    public init() {
        let queue = DispatchQueue(label: "framekit.video-data-output", qos: .userInteractive)
        state = Mutex(State(queue: queue))
        DelegateQueue.mark(queue)
    }

    /// Sets the delegate and the serial queue its callbacks run on (nil: a serial queue of
    /// user-interactive QoS). The output keeps a strong reference to the delegate. Frames that
    /// reach the output while it has neither a delegate nor a task iterating ``sampleBuffers``
    /// (a real-time source's; a file waits for a consumer) are dropped as
    /// `frameWasLate`, before conversion and processors: counted, never delivered.
    public func setSampleBufferDelegate(_ delegate: (any VideoDataOutputSampleBufferDelegate)?, queue: DispatchQueue? = nil) {
        if let queue { DelegateQueue.mark(queue) }
        state.withLock { s in
            s.delegate = delegate
            if let queue { s.queue = queue }
        }
        readiness.signal() // a source waiting for a consumer has one now
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

    /// Processors run on each frame delivered (to the delegate or an iterating task), on the
    /// delegate queue, before `didOutput`.
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

    package func validate(nativeFormat: PixelFormat) throws(CaptureError) {
        let (connection, delivered) = state.withLock { s in (s.connection, s.settings.pixelFormat ?? nativeFormat) }
        try connection.validate(deliveredFormat: delivered)
    }

    package func attach(notices: @escaping @Sendable (SessionNotification) -> Void) {
        state.withLock { $0.notices = notices }
        failing.store(false, ordering: .relaxed)
    }

    package func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) {
        state.withLock { s in
            s.connection.pixelFormat = s.settings.pixelFormat ?? nativeFormat
            s.capacity = max(1, capacity)
            s.finished = false
        }
    }

    /// Whether the consumer can take a frame now (sources that wait for their consumer ask).
    /// With no consumer at all yet — no delegate, no task iterating ``sampleBuffers`` — it is not:
    /// a file read as fast as consumed waits for one instead of handing its first frames to
    /// nobody (a task that starts iterating just after `startRunning()` gets every frame).
    package var isReadyForMoreFrames: Bool {
        state.withLock { s in
            guard s.queuedFrames == 0 else { return false }
            if s.asyncMode { return s.waiter != nil }
            return s.delegate != nil && !s.draining
        }
    }

    package func receive(_ frame: SampleBuffer) {
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

    package func receive(drop: DroppedFrame) {
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
    static func dropReport(_ s: inout State) -> @Sendable (VideoDataOutput, [DroppedFrame]) -> Void {
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
        /// What leaves the mailbox at once: the drops at its front, or one frame.
        enum Taken {
            case drops([DroppedFrame])
            case frame(SampleBuffer)
        }
        while true {
            let next: (Taken, (any VideoDataOutputSampleBufferDelegate)?, CaptureConnection)? = state.withLock { s in
                guard !s.events.isEmpty else {
                    s.draining = false
                    readiness.signal()
                    return nil
                }
                // A run of drops (a jump in a stream's timestamps queues up to 10,000) leaves in
                // one piece: taken from the array's front one by one, each cost O(n).
                let drops = s.events.prefix { if case .drop = $0 { true } else { false } }
                    .compactMap { event -> DroppedFrame? in if case .drop(let drop) = event { drop } else { nil } }
                if !drops.isEmpty {
                    s.events.removeFirst(drops.count)
                    return (.drops(drops), s.delegate, s.connection)
                }
                switch s.events.removeFirst() {
                case .frame(let frame):
                    s.queuedFrames -= 1
                    return (.frame(frame), s.delegate, s.connection)
                case .drop(let drop): return (.drops([drop]), s.delegate, s.connection)
                }
            }
            guard let (taken, delegate, connection) = next else { return }
            let link = connection
            switch taken {
            case .drops(let drops):
                for drop in drops {
                    yieldToListeners(drop)
                    delegate?.captureOutput(self, didDrop: drop, from: link)
                }
            case .frame(let frame):
                guard let delegate else {
                    // No delegate and no task iterating: a frame nobody asked for is late, as
                    // one an async consumer never asked for is at a stop (counted, not delivered).
                    let late = DroppedFrame(
                        sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime, reason: .frameWasLate)
                    state.withLock { s in
                        s.counts.pending -= 1
                        s.counts.dropped[.frameWasLate, default: 0] += 1
                    }
                    yieldToListeners(late)
                    continue
                }
                switch prepare(frame) {
                case .success(let ready):
                    state.withLock { s in
                        s.counts.pending -= 1
                        s.counts.delivered += 1
                    }
                    delegate.captureOutput(self, didOutput: ready, from: link)
                case .failure(let drop):
                    yieldToListeners(drop)
                    delegate.captureOutput(self, didDrop: drop, from: link)
                }
            }
        }
    }

    /// Conversion, connection transforms and processors; a failure drops the frame as
    /// `processingFailed`, with what was thrown.
    enum Prepared {
        case success(SampleBuffer)
        case failure(DroppedFrame)
    }
    func prepare(_ frame: SampleBuffer) -> Prepared {
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
            failing.store(false, ordering: .relaxed)
            return .success(ready)
        } catch {
            let drop = DroppedFrame(
                sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime, reason: .processingFailed,
                failure: "\(error)")
            let notices = state.withLock { s in
                s.counts.pending -= 1
                s.counts.dropped[.processingFailed, default: 0] += 1
                return s.notices
            }
            // The first of a run of failures is posted (frames are prepared one at a time).
            if !failing.exchange(true, ordering: .relaxed) { notices?(.processingFailed(drop)) }
            return .failure(drop)
        }
    }

    private func yieldToListeners(_ drop: DroppedFrame) {
        let listeners = state.withLock { Array($0.dropListeners.values) }
        for listener in listeners { listener.yield(drop) }
    }

    /// The session stopped: async iteration ends now, frames an async consumer never asked
    /// for are counted late, and the returned flush waits for the delegate queue to deliver
    /// what was queued (so the counts balance) and then ends the ``droppedFrames`` streams.
    package func finish() -> OutputFlush {
        let (waiter, late, report, queue, listenerIDs) = state.withLock { s in
            s.finished = true
            let waiter = s.waiter
            s.waiter = nil
            // Frames an async consumer never asked for are late: counted and reported as such.
            let left = s.events.compactMap { if case .frame(let f) = $0 { f } else { nil } }
            var late: [DroppedFrame] = []
            var report: (@Sendable (VideoDataOutput, [DroppedFrame]) -> Void)?
            if s.asyncMode && !left.isEmpty {
                s.events.removeAll()
                s.queuedFrames = 0
                s.counts.pending -= left.count
                s.counts.dropped[.frameWasLate, default: 0] += left.count
                late = left.map {
                    DroppedFrame(sequenceNumber: $0.sequenceNumber, presentationTime: $0.presentationTime, reason: .frameWasLate)
                }
                report = Self.dropReport(&s)
            }
            return (waiter, late, report, s.queue, Array(s.dropListeners.keys))
        }
        waiter?.resume(returning: nil)
        report?(self, late)
        // The drop streams end with the session, as ``sampleBuffers`` does (they went on for
        // ever, so a task awaiting them never finished), after the drops queued before the stop
        // reached them; streams asked for after the stop go on with the next start.
        return OutputFlush(
            after: queue,
            last: { [self] in
                let listeners = state.withLock { s in listenerIDs.compactMap { s.dropListeners.removeValue(forKey: $0) } }
                for listener in listeners { listener.finish() }
            })
    }
}

extension VideoDataOutput {
    public var sessionEndpoint: CaptureOutputEndpoint { CaptureOutputEndpoint(self) }
}
