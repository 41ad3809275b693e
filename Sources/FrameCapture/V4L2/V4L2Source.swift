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
    // Internal, not private, for this type's other file (V4L2Source+Still.swift).
    let configuration: SourceConfiguration
    let isRealTime = true
    let path: String
    let deviceID: String
    let kernel: any V4L2Kernel
    /// The controls subscribed to V4L2_EVENT_CTRL, by ID, for naming their changes.
    private var subscribed: [UInt32: DeviceControl] = [:]
    /// Added to the driver's sequence number to make FrameKit's, set at each frame (see `next`).
    var sequenceBase: UInt64 = 0
    /// The last number and time this source reported, and, after a still, where video left off.
    var last: (sequence: UInt64, time: Timestamp)?
    var resumeAfterStill: Timestamp?
    var stream: V4L2Stream?
    /// Video could not restart in its own format after a still: capture ends with this error
    /// (the photo had its own), not as if the camera's frames had simply ended.
    var restartFailure: CaptureError?
    var sequence = SequenceTracker()
    var pending: [SourceEvent] = []
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
        restartFailure = nil
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
        guard let stream else {
            if let restartFailure { throw restartFailure }
            return .endOfStream
        }
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
    func stop(releasingBuffers: Bool) -> CaptureError? {
        pending.removeAll() // queued frames borrow buffers: let them go before the buffers are freed
        let problem = stream?.stop(releasingBuffers: releasingBuffers)
        stream = nil
        return problem
    }
}

/// A V4L2 camera's sources: one per run, on the node at `path`.
struct V4L2SourceFactory: FrameSourceFactory {
    let path: String
    let deviceID: String
    let kernel: any V4L2Kernel
    var isRealTime: Bool { true }
    func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
        V4L2Source(path: path, deviceID: deviceID, kernel: kernel, configuration: configuration)
    }
}
