/// How a source read at its consumers' pace (a file not in real time) takes a buffer from its
/// pool.
///
/// A consumer done with a frame gives its buffer back, so a pool with none free means that a
/// consumer keeps frames beyond its callback. A buffer is waited for in short steps (the
/// source returns `.idle` between them, so a stop is seen) for up to ``limit`` seconds; past
/// that, frames drop as `outOfBuffers`, at once, until a buffer comes back. Waiting on would
/// stall the file for ever for a consumer that keeps every frame; ending the stream would lose
/// the rest of the file without a word.
package struct StarvationGuard {
    /// Seconds without a free buffer before frames drop.
    package static let limit = 1.0
    /// One step of the wait: how late a stop may be seen.
    package static let step = 0.05

    private var since: Timestamp?
    private var starved = false

    package init() {}

    /// False: no buffer yet (return `.idle` and ask again). True: `buffer` is a free one, or
    /// nil when the frame is to drop as `outOfBuffers` (none for ``limit`` seconds, or none
    /// since).
    package mutating func take(from pool: BufferPool, into buffer: inout PixelBuffer?) -> Bool {
        buffer = pool.makeBuffer(waitingUpTo: starved ? 0 : Self.step)
        if buffer != nil {
            self = StarvationGuard()
            return true
        }
        if starved { return true }
        let now = Timestamp.now()
        guard let since else {
            since = now
            return false
        }
        starved = now.seconds(since: since) >= Self.limit
        return starved
    }
}
