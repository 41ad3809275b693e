import CV4L2
import FrameCore
import FrameImageIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Streams from a V4L2 device with mmap buffers: S_FMT, S_PARM, REQBUFS, QBUF, STREAMON,
/// then poll + DQBUF per frame. Native formats are delivered without copying: the frame
/// borrows the driver buffer, which is re-queued when the last reference to it ends.
final class V4L2Source: FrameSource {
    let configuration: SourceConfiguration
    let isRealTime = true
    private let path: String
    private let deviceID: String
    private let kernel: any V4L2Kernel
    /// The controls subscribed to V4L2_EVENT_CTRL, by ID, for naming their changes.
    private var subscribed: [UInt32: DeviceControl] = [:]
    /// Added to the driver's sequence number to make FrameKit's, set at each frame (see `next`).
    private var sequenceBase: UInt64 = 0
    /// The last number and time this source reported, and, after a still, where video left off.
    private var last: (sequence: UInt64, time: Timestamp)?
    private var resumeAfterStill: Timestamp?
    private var stream: V4L2Stream?
    private var sequence = SequenceTracker()
    private var pending: [SourceEvent] = []
    private var decoder: JPEG.Decoder?
    private var decodePool: BufferPool?
    private var negotiated: (width: Int, height: Int, bytesPerRow: Int, sizeImage: Int) = (0, 0, 0, 0)

    init(path: String, deviceID: String, kernel: any V4L2Kernel, configuration: SourceConfiguration) {
        self.path = path
        self.deviceID = deviceID
        self.kernel = kernel
        self.configuration = configuration
    }

    func usageReporter() -> @Sendable () -> BufferPool.Usage {
        // The pool and the stream objects, not this source's vars (which stop() clears on the
        // capture thread): both are thread-safe and outlive the run while frames borrow them.
        let pool = decodePool
        let stream = self.stream
        return {
            if let pool { return pool.usage }
            return stream?.usage
                ?? BufferPool.Usage(buffersInUse: 0, peakBuffersInUse: 0, bytesInUse: 0, peakBytesInUse: 0, bytesAllocated: 0)
        }
    }

    func start() throws(CaptureError) {
        let handle = try V4L2Handle(path: path, kernel: kernel)
        let format = configuration.format
        // S_FMT: the driver may adjust what it cannot do, so read back and check.
        var fmt = v4l2_format()
        fmt.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        fmt.fmt.pix.width = UInt32(format.size.width)
        fmt.fmt.pix.height = UInt32(format.size.height)
        fmt.fmt.pix.pixelformat = format.v4l2Code
        fmt.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try handle.ioctl(cv4l2_VIDIOC_S_FMT, "VIDIOC_S_FMT", &fmt)
        guard fmt.fmt.pix.pixelformat == format.v4l2Code, Int(fmt.fmt.pix.width) == format.size.width,
            Int(fmt.fmt.pix.height) == format.size.height
        else {
            throw .formatRejected(
                "asked for \(format.fourCC) \(format.size), driver set "
                    + "\(V4L2FormatCatalog.string(fmt.fmt.pix.pixelformat)) \(fmt.fmt.pix.width)x\(fmt.fmt.pix.height)")
        }
        let minRow =
            configuration.format.pixelFormat.map {
                $0.planeGeometry(0, width: format.size.width, height: 1).width
                    * $0.planeGeometry(0, width: format.size.width, height: 1).bytesPerPixel
            } ?? 0
        negotiated = (format.size.width, format.size.height, max(Int(fmt.fmt.pix.bytesperline), minRow), Int(fmt.fmt.pix.sizeimage))

        // S_PARM: the frame rate, where the driver lets us set it.
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        let rate = configuration.frameRate
        parm.parm.capture.timeperframe = v4l2_fract(numerator: 1000, denominator: UInt32((rate * 1000).rounded()))
        do { try handle.ioctl(cv4l2_VIDIOC_S_PARM, "VIDIOC_S_PARM", &parm) } catch let .systemCall(_, e)
            where e.errno == ENOTTY || e.errno == EINVAL
        {
            // Drivers without frame-rate control run at their own rate.
        }

        if format.isCompressed {
            decoder = try? JPEG.Decoder()
            decodePool = try? BufferPool(
                width: format.size.width, height: format.size.height,
                format: configuration.pixelFormat, capacity: configuration.bufferCount)
        }
        stream = try V4L2Stream(handle: handle, count: configuration.bufferCount)
        // Control changes by anyone (this process through another descriptor, v4l2-ctl, the
        // driver itself) arrive on this descriptor as events, read when poll says POLLPRI.
        let controls = (try? handle.queryControls()) ?? []
        let wanted = controls.filter { $0.kind != .controlClass && $0.kind != .compound }
        let accepted = Set(handle.subscribeControlEvents(wanted.map(\.id)))
        subscribed = Dictionary(wanted.filter { accepted.contains($0.id) }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    func next() throws(CaptureError) -> SourceEvent {
        if !pending.isEmpty { return pending.removeFirst() }
        guard let stream else { return .endOfStream }
        var events: [V4L2Stream.ControlEvent] = []
        let dequeued = try stream.dequeue(timeoutMilliseconds: 200, events: &events)
        for event in events {
            let known = subscribed[event.id]
            pending.append(
                .notice(
                    .deviceControlChanged(
                        DeviceControl.Change(
                            device: deviceID, id: event.id, key: known?.key ?? String(event.id), value: event.value,
                            flags: DeviceControl.Flags(rawValue: event.flags),
                            valueChanged: event.changes & cv4l2_EVENT_CTRL_CH_VALUE != 0,
                            flagsChanged: event.changes & cv4l2_EVENT_CTRL_CH_FLAGS != 0,
                            rangeChanged: event.changes & cv4l2_EVENT_CTRL_CH_RANGE != 0))))
        }
        guard let dequeued else { return pending.isEmpty ? .idle : pending.removeFirst() }
        let seq = dequeued.sequence
        // FrameKit's numbers run on from the last one reported, whatever the driver's do: its
        // own only say how many frames were lost in between. A number it repeats, one that runs
        // backwards (a restart) or wraps at 2^32 still gets a fresh, larger number here.
        var lost = sequence.gap(before: seq)
        var reason: DropReason = dequeued.starvedBefore ? .outOfBuffers : .discontinuity
        var times: (start: Timestamp, period: Double)?
        if let resumeTime = resumeAfterStill {
            // Back from a still: the frames a camera at this rate would have delivered in the
            // gap were never captured. Report them, and number on from where video left off.
            resumeAfterStill = nil
            let period = 1 / configuration.frameRate
            let elapsed = dequeued.timestamp.seconds(since: resumeTime)
            lost = max(0, Int(saturating: (elapsed / period).rounded()) - 1)
            reason = .photoCapture
            times = (resumeTime, period)
        }
        // The first number is the driver's, or after a still taken before any frame, the gap's.
        let number = last.map { $0.sequence &+ 1 &+ UInt64(lost) } ?? (times == nil ? UInt64(seq) : UInt64(lost))
        sequenceBase = number &- UInt64(seq)
        for i in 0..<lost {
            let time = times.map { $0.start.adding(seconds: Double(i + 1) * $0.period).seconds } ?? dequeued.timestamp.seconds
            pending.append(.dropped(DroppedFrame(sequenceNumber: number &- UInt64(lost - i), presentationTime: time, reason: reason)))
        }
        last = (number, dequeued.timestamp)
        let event = makeFrame(dequeued, stream: stream)
        if pending.isEmpty { return event }
        pending.append(event)
        return pending.removeFirst()
    }

    /// A still in `format`: streaming stops (buffers given back), the still is taken in that
    /// format, and video restarts in its own; the next frames report the gap.
    func captureStill(format: CaptureDeviceFormat, flash: Bool) throws(CaptureError) -> SampleBuffer {
        let resume = last?.time ?? Timestamp.now()
        // Queued frames borrow the driver's buffers, which the switch needs back: they are
        // reported as photoCapture drops instead (the photo's moment is now).
        pending = pending.map { event in
            guard case .frame(let frame) = event else { return event }
            return .dropped(
                DroppedFrame(sequenceNumber: frame.sequenceNumber, presentationTime: frame.presentationTime, reason: .photoCapture))
        }
        let released = stream?.stop(releasingBuffers: true)
        stream = nil
        let still = V4L2Source(
            path: path, deviceID: deviceID, kernel: kernel,
            configuration: SourceConfiguration(
                format: format, pixelFormat: format.pixelFormat ?? .nv12FullRange, frameRate: format.frameRates.last ?? 30,
                bufferCount: 2))
        var result: Result<SampleBuffer, CaptureError> = .failure(.configuration("no frame at \(format.size) within 3 s"))
        do throws(CaptureError) {
            try still.start()
            if flash { try still.fireFlash() }
            let deadline = Timestamp.now().adding(seconds: 3)
            while Timestamp.now().seconds(since: deadline) < 0 {
                guard case .frame(var frame) = try still.next() else { continue }
                frame.pixelBuffer = frame.pixelBuffer.copy() // the driver's buffer goes back before the switch
                result = .success(frame)
                break
            }
        } catch .deviceBusy {
            result = .failure(.configuration("cannot switch to \(format) for the photo: \(released ?? "the device is busy")"))
        } catch {
            result = .failure(error)
        }
        if flash { try? still.setFlash(on: false) }
        let stillReleased = still.stop(releasingBuffers: true)
        do { try start() } catch .deviceBusy { // video again, in its own format
            throw .configuration("cannot restart video after the photo: \(stillReleased ?? "the device is busy")")
        }
        resumeAfterStill = resume
        sequence = SequenceTracker() // the driver's numbers start again
        return try result.get()
    }

    /// Strobes the flash (flash_led_mode = flash, then flash_strobe) where the device has them.
    private func fireFlash() throws(CaptureError) {
        try setFlash(on: true)
        guard let handle = stream?.handle, let strobe = try handle.queryControls().first(where: { $0.id == cv4l2_CID_FLASH_STROBE })
        else { return }
        _ = try handle.set(strobe, to: 1)
    }

    private func setFlash(on: Bool) throws(CaptureError) {
        guard let handle = stream?.handle, let mode = try handle.queryControls().first(where: { $0.id == cv4l2_CID_FLASH_LED_MODE })
        else { throw .unsupportedMode("flash mode on (no flash_led_mode control)", device: deviceID) }
        _ = try handle.set(mode, to: Int64(on ? cv4l2_FLASH_LED_MODE_FLASH : cv4l2_FLASH_LED_MODE_NONE))
    }

    private func makeFrame(_ d: V4L2Stream.Dequeued, stream: V4L2Stream) -> SourceEvent {
        let number = sequenceBase &+ UInt64(d.sequence)
        let drop = SourceEvent.dropped(DroppedFrame(sequenceNumber: number, presentationTime: d.timestamp.seconds, reason: .corrupt))
        if d.hasError || d.bytesUsed == 0 {
            stream.requeue(d.index)
            return drop
        }
        let size = configuration.format.size
        if configuration.format.isCompressed {
            defer { stream.requeue(d.index) } // decoded into our own buffer: the driver's goes straight back
            guard let decoder, let decodePool else { return drop }
            guard var buffer = decodePool.makeBuffer() else {
                return .dropped(DroppedFrame(sequenceNumber: number, presentationTime: d.timestamp.seconds, reason: .outOfBuffers))
            }
            do {
                try decoder.decode(UnsafeRawBufferPointer(start: stream.address(of: d.index), count: d.bytesUsed), into: &buffer)
            } catch { return drop }
            return .frame(
                SampleBuffer(
                    pixelBuffer: buffer, presentationTime: d.timestamp.seconds,
                    sequenceNumber: number, captureInstant: d.timestamp))
        }
        guard let pixelFormat = configuration.format.pixelFormat else {
            stream.requeue(d.index)
            return drop
        }
        let bpr = negotiated.bytesPerRow
        var planes: [(offset: Int, bytesPerRow: Int)] = [(0, bpr)]
        switch pixelFormat {
        case .nv12VideoRange, .nv12FullRange: planes.append((bpr * size.height, bpr))
        case .i420: planes += [(bpr * size.height, bpr / 2), (bpr * size.height + (bpr / 2) * (size.height / 2), bpr / 2)]
        default: break
        }
        let storage = stream.borrow(d.index)
        do {
            let buffer = try PixelBuffer(width: size.width, height: size.height, format: pixelFormat, storage: storage, planes: planes)
            return .frame(
                SampleBuffer(
                    pixelBuffer: buffer, presentationTime: d.timestamp.seconds,
                    sequenceNumber: number, captureInstant: d.timestamp))
        } catch {
            return drop // a short buffer: the storage's release re-queues it
        }
    }

    func stop() { stop(releasingBuffers: false) }

    @discardableResult
    func stop(releasingBuffers: Bool) -> String? {
        pending.removeAll() // queued frames borrow buffers: let them go before the buffers are freed
        let problem = stream?.stop(releasingBuffers: releasingBuffers)
        stream = nil
        return problem
    }
}

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
        // report POLLERR: wait for one to come back instead.
        if state.withLock({ $0.queued.isEmpty }) {
            Timestamp.sleep(until: Timestamp.now().adding(seconds: 0.002))
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
    /// then REQBUFS 0) so another format can be set. Frames still borrowing them are waited for
    /// (up to half a second: a consumer is done with a frame within a frame or two); libv4l2,
    /// like many drivers, refuses to free buffers that are still mapped.
    @discardableResult
    func stop(releasingBuffers: Bool = false) -> String? {
        let wasStreaming = state.withLock { s -> Bool in
            defer { s.streaming = false }
            return s.streaming
        }
        if wasStreaming {
            var type = Int32(V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue)
            try? handle.ioctl(cv4l2_VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type)
        }
        guard releasingBuffers, !state.withLock({ $0.released }) else { return nil }
        let deadline = Timestamp.now().adding(seconds: 0.5)
        while state.withLock({ $0.borrowed > 0 }) && Timestamp.now().seconds(since: deadline) < 0 {
            Timestamp.sleep(until: Timestamp.now().adding(seconds: 0.002))
        }
        let unmapped = state.withLock { s -> Bool in
            guard s.borrowed == 0 else { return false }
            s.unmapped = true
            return true
        }
        guard unmapped else { return "a consumer still holds \(state.withLock { $0.borrowed }) of the camera's buffers" }
        for m in mappings.value { handle.kernel.munmap(m.address, length: m.length) }
        var none = v4l2_requestbuffers()
        none.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        none.memory = V4L2_MEMORY_MMAP.rawValue
        do throws(SystemCallError) {
            try handle.rawErrnoIoctl(cv4l2_VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &none)
        } catch {
            return "the driver kept its buffers: \(error)"
        }
        state.withLock { $0.released = true }
        return nil
    }
}
