import CV4L2
import Foundation
import FrameCore
import FrameImageIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The mmap buffers of one streaming run. Outlives `stop()` while any frame still borrows a
/// buffer: the mapping (and the descriptor) end only when the last frame does, and a buffer
/// released after `stop()` is not re-queued.
final class V4L2Stream: Sendable {
    struct Dequeued {
        var index: Int
        var sequence: UInt32
        var timestamp: Timestamp
        var bytesUsed: Int
        var hasError: Bool
        /// Whether the kernel had no buffer to fill at some point since the previous frame
        /// (the consumer held them all): a gap then means outOfBuffers, not an upstream loss.
        var starvedBefore: Bool
    }

    private struct State {
        var streaming = true
        var queued: Set<Int> = []
        var borrowed = 0
        var peakBorrowed = 0
        var starved = false
        var released = false
        var unmapped = false
    }

    let handle: V4L2Handle
    /// Addresses and lengths of the mappings. `@unchecked Sendable`: the array is immutable after
    /// init, and the memory it points to is written only by the kernel while a buffer is queued
    /// and read by one frame while it is borrowed (the queued/borrowed state is under `state`).
    private struct Mappings: @unchecked Sendable {
        let value: [(address: UnsafeMutableRawPointer, length: Int)]
    }
    private let mappings: Mappings
    private let state = Mutex(State())
    /// Broadcast when a consumer gives a buffer back and when streaming stops: what the capture
    /// thread waits on with every buffer held, and a release waits on for the last one. Its
    /// waiters check `state` while holding it, and a return takes it to broadcast after changing
    /// `state`, so no wake-up is lost.
    private let returned = NSCondition()
    /// The most a release of the driver's buffers waits for consumers to give them back.
    static let releaseWait = 0.5

    init(handle: V4L2Handle, count: Int) throws(CaptureError) {
        self.handle = handle
        var req = v4l2_requestbuffers()
        req.count = UInt32(count)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        try handle.ioctl(cv4l2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &req)
        guard req.count >= 2 else { throw .formatRejected("the driver granted \(req.count) buffers; streaming needs 2") }
        var maps: [(UnsafeMutableRawPointer, Int)] = []
        func unwind() {
            for (address, length) in maps { handle.kernel.munmap(address, length: length) }
            var none = v4l2_requestbuffers()
            none.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            none.memory = V4L2_MEMORY_MMAP.rawValue
            try? handle.ioctl(cv4l2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &none)
        }
        do {
            for index in 0..<Int(req.count) {
                var buf = Self.buffer(index)
                try handle.ioctl(cv4l2_VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buf)
                let (pointer, error) = handle.kernel.mmap(handle.fd, length: Int(buf.length), offset: Int64(buf.m.offset))
                guard let pointer else { throw CaptureError.systemCall(path: handle.path, SystemCallError(call: "mmap", errno: error)) }
                maps.append((pointer, Int(buf.length)))
            }
            for index in 0..<maps.count {
                var buf = Self.buffer(index)
                try handle.ioctl(cv4l2_VIDIOC_QBUF, "VIDIOC_QBUF", &buf)
            }
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try handle.ioctl(cv4l2_VIDIOC_STREAMON, "VIDIOC_STREAMON", &type)
        } catch let error as CaptureError {
            unwind()
            throw error
        } catch {
            unwind()
            throw .configuration("\(error)")
        }
        mappings = Mappings(value: maps.map { (address: $0.0, length: $0.1) })
        state.withLock { $0.queued = Set(0..<maps.count) }
    }

    deinit {
        let (unmapped, released) = state.withLock { ($0.unmapped, $0.released) }
        if !unmapped { for m in mappings.value { handle.kernel.munmap(m.address, length: m.length) } }
        if released { return }
        var none = v4l2_requestbuffers()
        none.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        none.memory = V4L2_MEMORY_MMAP.rawValue
        try? handle.ioctl(cv4l2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &none)
        // The descriptor closes when `handle` goes, right after this.
    }

    static func buffer(_ index: Int) -> v4l2_buffer {
        var buf = v4l2_buffer()
        buf.index = UInt32(index)
        buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        buf.memory = V4L2_MEMORY_MMAP.rawValue
        return buf
    }

    var usage: BufferPool.Usage {
        let length = mappings.value.first?.length ?? 0
        return state.withLock { s in
            BufferPool.Usage(
                buffersInUse: s.borrowed, peakBuffersInUse: s.peakBorrowed, bytesInUse: s.borrowed * length,
                peakBytesInUse: s.peakBorrowed * length, bytesAllocated: mappings.value.count * length)
        }
    }

    func address(of index: Int) -> UnsafeMutableRawPointer { mappings.value[index].address }

    /// A V4L2_EVENT_CTRL read from the descriptor.
    struct ControlEvent {
        var id: UInt32
        var changes: UInt32
        var value: Int64
        var flags: UInt32
    }

    /// Waits up to `timeoutMilliseconds` for a filled buffer; control events that are pending
    /// (POLLPRI) are added to `events`. Throws on EIO/POLLERR (runtime error) and ENODEV (the
    /// device went away).
    func dequeue(timeoutMilliseconds: Int32, events: inout [ControlEvent]) throws(CaptureError) -> Dequeued? {
        let kernel = handle.kernel
        let fd = handle.fd
        // With every buffer held by consumers the kernel has nothing to fill, and poll would
        // report POLLERR: wait for one to come back instead (woken by its return), for as long
        // as a poll would have waited.
        if state.withLock({ $0.queued.isEmpty }) {
            let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
            returned.lock()
            while state.withLock({ $0.queued.isEmpty && $0.streaming }) && returned.wait(until: deadline) {}
            returned.unlock()
            return nil
        }
        let polled: Int
        var revents: Int16 = 0
        do {
            polled = try retryingSystemCall("poll") {
                let r = kernel.poll(fd, events: Int16(POLLIN | POLLPRI), timeoutMilliseconds: timeoutMilliseconds)
                revents = r.revents
                return (r.result, r.errno)
            }
        } catch { throw V4L2Handle.classify(error, path: handle.path) }
        if polled == 0 { return nil }
        if revents & Int16(POLLNVAL) != 0 { throw .deviceLost(path: handle.path) }
        if revents & Int16(POLLPRI) != 0 {
            while events.count < 64, let e = handle.dequeueControlEvent() {
                events.append(ControlEvent(id: e.id, changes: e.changes, value: e.value, flags: e.flags))
            }
            if revents & Int16(POLLIN | POLLERR) == 0 { return nil }
        }
        // POLLERR: DQBUF below says why (EIO, ENODEV); if it somehow succeeds, carry on.
        var buf = Self.buffer(0)
        do {
            try handle.ioctl(cv4l2_VIDIOC_DQBUF, "VIDIOC_DQBUF", &buf)
        } catch let .systemCall(_, e) where e.errno == EAGAIN {
            if revents & Int16(POLLERR) != 0 {
                throw .systemCall(path: handle.path, SystemCallError(call: "poll (POLLERR)", errno: EIO))
            }
            return nil
        }
        let index = Int(buf.index)
        let starved = state.withLock { s -> Bool in
            let wasStarved = s.starved
            s.queued.remove(index)
            s.starved = s.queued.isEmpty
            return wasStarved
        }
        let monotonic = buf.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
        let stamp =
            monotonic && (buf.timestamp.tv_sec != 0 || buf.timestamp.tv_usec != 0)
            ? Timestamp(nanoseconds: UInt64(buf.timestamp.tv_sec) * 1_000_000_000 + UInt64(buf.timestamp.tv_usec) * 1000)
            : Timestamp.now()
        return Dequeued(
            index: index, sequence: buf.sequence, timestamp: stamp, bytesUsed: Int(buf.bytesused),
            hasError: buf.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0, starvedBefore: starved)
    }

    /// Waits until at most `allowed` frames borrow the driver's buffers (the caller's own, which
    /// it lets go next), woken as each comes back, for at most ``releaseWait`` seconds; returns
    /// how many are still out.
    @discardableResult
    func awaitBorrowedBuffers(beyond allowed: Int = 0) -> Int {
        let deadline = Date().addingTimeInterval(Self.releaseWait)
        returned.lock()
        while state.withLock({ $0.borrowed > allowed }) && returned.wait(until: deadline) {}
        returned.unlock()
        return state.withLock { $0.borrowed }
    }

    /// Wraps buffer `index` as pixel storage; the buffer is re-queued when the storage ends.
    func borrow(_ index: Int) -> PixelStorage {
        state.withLock { s in
            s.borrowed += 1
            s.peakBorrowed = max(s.peakBorrowed, s.borrowed)
        }
        let m = mappings.value[index]
        return PixelStorage(borrowing: m.address, byteCount: m.length) { [self] _ in
            state.withLock { $0.borrowed -= 1 }
            requeue(index)
            returned.lock()
            returned.broadcast()
            returned.unlock()
        }
    }

    /// Gives buffer `index` back to the driver (nothing after `stop()`). The check, the QBUF and
    /// the bookkeeping happen under one lock, in that order: the capture thread may DQBUF the
    /// buffer the moment QBUF returns, and its removal from `queued` (which takes the lock) must
    /// come after this insertion, or `queued` would name a buffer the driver does not hold (and
    /// with consumers holding every other one, poll would report POLLERR: a spurious EIO).
    func requeue(_ index: Int) {
        state.withLock { s in
            guard s.streaming else { return }
            var buf = Self.buffer(index)
            do {
                try handle.ioctl(cv4l2_VIDIOC_QBUF, "VIDIOC_QBUF", &buf)
                s.queued.insert(index)
            } catch {
                // A device that went away or stopped: the next DQBUF reports it.
            }
        }
    }

    /// STREAMOFF; with `releasingBuffers`, the driver's buffers are also freed now (unmapped,
    /// then REQBUFS 0) so another format can be set. Frames still borrowing them are waited for,
    /// woken as each comes back, for at most ``releaseWait`` seconds (a consumer is done with a
    /// frame within a frame or two; one that keeps a driver buffer longer — docs/capture.md:
    /// copy what you keep — gets `CaptureError.buffersHeld`, which a
    /// photo reports as its error); libv4l2, like many drivers, refuses to free buffers that
    /// are still mapped. Returns why the buffers were not freed, if they were asked for.
    @discardableResult
    func stop(releasingBuffers: Bool = false) -> CaptureError? {
        let wasStreaming = state.withLock { s -> Bool in
            defer { s.streaming = false }
            return s.streaming
        }
        if wasStreaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try? handle.ioctl(cv4l2_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type)
            returned.lock()
            returned.broadcast() // a capture thread waiting for a buffer sees the stop
            returned.unlock()
        }
        guard releasingBuffers, !state.withLock({ $0.released }) else { return nil }
        awaitBorrowedBuffers()
        let unmapped = state.withLock { s -> Bool in
            guard s.borrowed == 0 else { return false }
            s.unmapped = true
            return true
        }
        guard unmapped else { return .buffersHeld(device: handle.path, count: state.withLock { $0.borrowed }, seconds: Self.releaseWait) }
        for m in mappings.value { handle.kernel.munmap(m.address, length: m.length) }
        var none = v4l2_requestbuffers()
        none.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        none.memory = V4L2_MEMORY_MMAP.rawValue
        do throws(SystemCallError) {
            try handle.rawErrnoIoctl(cv4l2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &none)
        } catch {
            return .systemCall(path: handle.path, error)
        }
        state.withLock { $0.released = true }
        return nil
    }
}
