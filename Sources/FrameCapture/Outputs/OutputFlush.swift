import Dispatch

/// The second half of an output's stop: waits until the output's delegate queue has run
/// everything queued before the stop (so the delegate has had every frame, drop and result),
/// then runs what must follow it. A session stops its outputs under its lock and waits on their
/// flushes only after letting go of it, so a delegate that calls the session meanwhile (to stop
/// it, say) runs instead of waiting for the thread that waits for it. There is no timeout: the
/// wait ends when the delegate's callbacks return, however long a write stalls.
package struct OutputFlush: Sendable {
    private let queue: DispatchQueue?
    private let done: DispatchSemaphore?
    private let then: @Sendable () -> Void

    /// Nothing to wait for.
    package static let none = OutputFlush(queue: nil, done: nil, then: {})

    private init(queue: DispatchQueue?, done: DispatchSemaphore?, then: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.done = done
        self.then = then
    }

    /// Queues `last` on `queue` now (behind everything already queued there); ``wait()`` returns
    /// once it has run, then runs `then`.
    package init(after queue: DispatchQueue, last: @escaping @Sendable () -> Void = {}, then: @escaping @Sendable () -> Void = {}) {
        let done = DispatchSemaphore(value: 0)
        queue.async {
            last()
            done.signal()
        }
        self.init(queue: queue, done: done, then: then)
    }

    /// Waits for the queue, then runs the follow-up. On the queue itself (a delegate stopping the
    /// session) it does not wait, which would be waiting for itself: the queued work follows the
    /// delegate's return.
    package func wait() {
        if let queue, let done, !DelegateQueue.isCurrent(queue) { done.wait() }
        then()
    }

    /// Waits on every flush of `flushes`, then runs `then`.
    package init(waitingFor flushes: [OutputFlush], then: @escaping @Sendable () -> Void = {}) {
        self.init(queue: nil, done: nil) {
            for flush in flushes { flush.wait() }
            then()
        }
    }

    /// This flush's wait, then `next`'s.
    package func followed(by next: OutputFlush) -> OutputFlush {
        OutputFlush(queue: nil, done: nil) {
            wait()
            next.wait()
        }
    }
}

/// Marks the queues delegates are called on, so that a flush can tell it runs on one.
package enum DelegateQueue {
    private final class Mark {}
    // A key is an identity with no state: immutable after this initialisation, safe to share.
    nonisolated(unsafe) private static let key = DispatchSpecificKey<Mark>()

    package static func mark(_ queue: DispatchQueue) {
        if queue.getSpecific(key: key) == nil { queue.setSpecific(key: key, value: Mark()) }
    }

    /// Whether the calling code runs on `queue` (which must have been marked).
    package static func isCurrent(_ queue: DispatchQueue) -> Bool {
        guard let current = DispatchQueue.getSpecific(key: key) else { return false }
        return current === queue.getSpecific(key: key)
    }
}
