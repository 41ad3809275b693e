import Dispatch
import FrameCore

// Frames and drops as AsyncSequences: one task at a time claims the frames while it iterates.
extension VideoDataOutput {
    /// Every dropped frame, with its reason, as an `AsyncSequence` (from now on until the
    /// session stops, when it ends as ``sampleBuffers`` does, the frames left at the stop
    /// reported first): the same drops, counted the same way, as the delegate's didDrop.
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
    /// iterating at once gets ``CaptureError/asyncConsumerExists`` from `next()`, never a hang.
    /// The sequence ends when the session stops, or when the iterating task is cancelled.
    /// Conversion and ``processors`` run on the output's delegate queue, as for a delegate (a
    /// face detector's passes never occupy a thread of Swift's cooperative pool).
    public var sampleBuffers: SampleBufferSequence { SampleBufferSequence(output: self) }

    public struct SampleBufferSequence: AsyncSequence, Sendable {
        public typealias Element = SampleBuffer
        let output: VideoDataOutput
        public struct AsyncIterator: AsyncIteratorProtocol {
            let registration: Registration
            public mutating func next() async throws -> SampleBuffer? {
                try await registration.output.nextForAsyncConsumer(registration.id)
            }

            /// Claims the frames for this iterator now, before its first `next()`: frames that
            /// arrive meanwhile wait for it (the newest, while late ones are discarded) rather
            /// than go to the delegate. For a consumer that starts the session and then pulls
            /// (FrameKit's C API), so that the first frames are not the delegate's.
            package func claim() throws(CaptureError) {
                try registration.output.claim(consumer: registration.id)
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

    func claim(consumer id: UInt64) throws(CaptureError) {
        let claimed = state.withLock { s -> Bool in
            if s.asyncConsumer == nil { s.asyncConsumer = id }
            return s.asyncConsumer == id
        }
        guard claimed else { throw .asyncConsumerExists }
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
            throw .asyncConsumerExists
        }
        while true {
            let raw: SampleBuffer? = await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let immediate: SampleBuffer?? = state.withLock { s in
                        // Cancellation first: a consumer slower than the source always finds a
                        // frame queued, and its loop would otherwise never see the cancel.
                        if Task.isCancelled { return .some(nil) }
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
            } onCancel: {
                // The waiting task was cancelled: its `next()` returns nil (the end), as an
                // AsyncStream's does; a frame that arrives later waits for the next iterator.
                let waiter = state.withLock { s -> CheckedContinuation<SampleBuffer?, Never>? in
                    guard s.asyncConsumer == id else { return nil }
                    defer { s.waiter = nil }
                    return s.waiter
                }
                waiter?.resume(returning: nil)
            }
            guard let raw else { return nil }
            let queue = state.withLock { $0.queue }
            let prepared = await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: self.prepare(raw)) }
            }
            switch prepared {
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
}
