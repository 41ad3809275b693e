import Dispatch
import Synchronization

/// A bounded set of same-sized pixel buffers, reused frame after frame.
///
/// ``makeBuffer()`` returns `nil` when every buffer is still held by someone: the producer then
/// reports an `outOfBuffers` drop (or, for sources that wait for their consumer, waits with
/// ``makeBuffer(waitingUpTo:)``). A buffer returns to the pool when its last ``PixelBuffer``
/// reference ends.
public final class BufferPool: Sendable {
    public let width: Int
    public let height: Int
    public let format: PixelFormat
    public let capacity: Int
    /// Bytes of one buffer.
    public let bufferByteCount: Int

    /// One buffer's memory. `@unchecked Sendable`: it has one holder at a time — the free list,
    /// under the pool's lock, or the one `PixelStorage` it is checked out to — so no two threads
    /// ever reach it at once.
    private struct Memory: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    private struct State {
        var free: [Memory] = []
        var allocated = 0
        var inUse = 0
        var peakInUse = 0
    }

    /// Statistics of a pool at one instant.
    public struct Usage: Sendable, Equatable {
        public var buffersInUse: Int
        public var peakBuffersInUse: Int
        public var bytesInUse: Int
        public var peakBytesInUse: Int
        public var bytesAllocated: Int

        public init(
            buffersInUse: Int = 0, peakBuffersInUse: Int = 0, bytesInUse: Int = 0, peakBytesInUse: Int = 0,
            bytesAllocated: Int = 0
        ) {
            self.buffersInUse = buffersInUse
            self.peakBuffersInUse = peakBuffersInUse
            self.bytesInUse = bytesInUse
            self.peakBytesInUse = peakBytesInUse
            self.bytesAllocated = bytesAllocated
        }
    }

    private let state: Mutex<State>
    private let available: DispatchSemaphore

    public init(width: Int, height: Int, format: PixelFormat, capacity: Int) throws(PixelBufferError) {
        precondition(capacity > 0, "a pool needs at least one buffer")
        try PixelBuffer.validate(width: width, height: height, format: format)
        self.width = width
        self.height = height
        self.format = format
        self.capacity = capacity
        self.bufferByteCount = format.byteCount(width: width, height: height)
        self.state = Mutex(State())
        self.available = DispatchSemaphore(value: capacity)
    }

    deinit {
        state.withLock { box in
            assert(box.inUse == 0, "a pool cannot end while buffers are out: they hold a reference")
            for memory in box.free { memory.pointer.deallocate() }
        }
    }

    /// A buffer from the pool, or `nil` when all `capacity` buffers are in use.
    public func makeBuffer() -> PixelBuffer? {
        guard available.wait(timeout: .now()) == .success else { return nil }
        return checkout()
    }

    /// Waits up to `timeout` seconds for a buffer to come back.
    public func makeBuffer(waitingUpTo timeout: Double) -> PixelBuffer? {
        guard available.wait(timeout: .now() + timeout) == .success else { return nil }
        return checkout()
    }

    public var usage: Usage {
        state.withLock { box in
            Usage(
                buffersInUse: box.inUse, peakBuffersInUse: box.peakInUse,
                bytesInUse: box.inUse * bufferByteCount, peakBytesInUse: box.peakInUse * bufferByteCount,
                bytesAllocated: box.allocated * bufferByteCount)
        }
    }

    private func checkout() -> PixelBuffer {
        let memory = state.withLock { box -> Memory in
            box.inUse += 1
            box.peakInUse = max(box.peakInUse, box.inUse)
            if let reused = box.free.popLast() { return reused }
            box.allocated += 1
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: bufferByteCount, alignment: 64)
            fresh.initializeMemory(as: UInt8.self, repeating: 0, count: bufferByteCount)
            return Memory(pointer: fresh)
        }
        // The closure keeps the pool alive while any of its buffers is out.
        let storage = PixelStorage(borrowing: memory.pointer, byteCount: bufferByteCount) { [self] pointer in
            giveBack(pointer)
        }
        do {
            return try PixelBuffer(width: width, height: height, format: format, packedStorage: storage)
        } catch {
            preconditionFailure("pool layout was validated at init: \(error)")
        }
    }

    private func giveBack(_ pointer: UnsafeMutableRawPointer) {
        state.withLock { box in
            box.inUse -= 1
            box.free.append(Memory(pointer: pointer))
        }
        available.signal()
    }
}
