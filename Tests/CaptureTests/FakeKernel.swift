import CV4L2
import Foundation
import FrameKit
import FrameTestSupport
import Synchronization

/// A fake V4L2 kernel behind FrameKit's syscall layer: plays a camera's side of every ioctl,
/// mmap and poll, from a script of frames and faults, so the real backend code runs without
/// a device. (The vivid VM suite proves the same code against a real driver.)
final class FakeKernel: V4L2Kernel {
    struct Mode: Hashable {
        var fourCC: UInt32
        var width: Int
        var height: Int
    }

    /// One step of what the "camera" does when the backend dequeues.
    enum Step {
        case frame(sequence: UInt32, error: Bool = false)
        /// DQBUF fails with this errno (EIO: fatal streaming error; ENODEV: unplugged).
        case fail(Int32)
        /// A frame numbered as a driver does: from 0 at each STREAMON.
        case counted
    }

    /// One buffer of the fake driver. `@unchecked Sendable`: as a real driver's, it is written
    /// (DQBUF fills it) only under the fake's lock while queued, and read by the one frame that
    /// borrows it after; never freed (REQBUFS 0 orphans it), so a late reader never reads freed memory.
    struct DriverMemory: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    struct State {
        var nodes: [String: Node] = [:]
        var fds: [Int32: String] = [:]
        var nextFD: Int32 = 100
        var script: [Step] = []
        var buffers: [DriverMemory] = []
        var bufferLength = 0
        var queued: [Int] = []
        var streaming = false
        var format: Mode?
        var bytesPerLine = 0
        var frameRate: Double = 0
        var calls: [String: Int] = [:]
        var interruptNext = 0 // calls to fail with EINTR first
        var failNextReqbufs: Int32 = 0
        var failNextStreamon: Int32 = 0
        var qbufPerIndex: [Int: Int] = [:]
        var dqbufPerIndex: [Int: Int] = [:]
        var rowPadding = 0 // extra bytes per row, to test strides
        var adjustSizeTo: (Int, Int)? // S_FMT answers with another size
        var jpegFrame: [UInt8]? // what MJPEG modes deliver
        var subscriptions: [Int32: Set<UInt32>] = [:]
        var events: [Int32: [(id: UInt32, changes: UInt32, value: Int64, flags: UInt32, type: UInt32)]] = [:]
        var locks: [String: Int32] = [:] // flock holders by node
        /// vb2's rule: S_FMT is EBUSY while buffers are allocated (off by default).
        var busyFormatWhileAllocated = false
        /// Buffers given back with REQBUFS 0 while frames may still map them (vb2's orphaned
        /// buffers): kept alive, never reused.
        var orphaned: [DriverMemory] = []
        /// Every S_FMT that succeeded, as WIDTHxHEIGHT.
        var formats: [String] = []
        /// Values set through S_EXT_CTRLS, in order, as (id, value).
        var sets: [(UInt32, Int64)] = []
        var streamCounter: UInt32 = 0
    }

    /// A control as a driver declares it; `clampTo` plays a driver that keeps less than its
    /// declared maximum (a real UVC quirk), `busyWhileStreaming` one grabbed by the stream.
    struct Control {
        var id: UInt32
        var name: String
        var type: UInt32 = V4L2_CTRL_TYPE_INTEGER.rawValue
        var minimum: Int64 = 0
        var maximum: Int64 = 255
        var step: UInt64 = 1
        var defaultValue: Int64 = 0
        var value: Int64 = 0
        var flags: UInt32 = 0
        var menu: [UInt32: String] = [:]
        var intMenu: [UInt32: Int64] = [:]
        var clampTo: Int64?
        var busyWhileStreaming = false
    }

    struct Node {
        var capture = true
        var denied = false
        var modes: [Mode] = []
        var rates: [Double] = [30, 15]
        var controls: [Control] = []
    }

    /// A UVC-like webcam's controls: user and camera classes, menus with a gap, an integer
    /// menu, a read-only and a 64-bit control.
    static let webcamControls: [Control] = [
        Control(id: 0x0098_0001, name: "User Controls", type: V4L2_CTRL_TYPE_CTRL_CLASS.rawValue, maximum: 0, step: 0, flags: 0x44),
        Control(id: cv4l2_CID_BRIGHTNESS, name: "Brightness", minimum: -64, maximum: 64, defaultValue: 0, value: 0, flags: 0x20),
        Control(id: cv4l2_CID_CONTRAST, name: "Contrast", minimum: 0, maximum: 95, defaultValue: 32, value: 32),
        Control(
            id: cv4l2_CID_AUTO_WHITE_BALANCE, name: "White Balance, Automatic", type: V4L2_CTRL_TYPE_BOOLEAN.rawValue, maximum: 1,
            defaultValue: 1, value: 1),
        Control(id: cv4l2_CID_GAIN, name: "Gain", minimum: 0, maximum: 100, defaultValue: 10, value: 10),
        Control(
            id: cv4l2_CID_WHITE_BALANCE_TEMPERATURE, name: "White Balance Temperature", minimum: 2800, maximum: 6500, step: 10,
            defaultValue: 4600, value: 4600, flags: 0x10),
        Control(id: 0x0098_0000 | 0x1001, name: "Frame Counter", minimum: 0, maximum: 1 << 40, flags: 0x84),
        Control(
            id: 0x0098_0000 | 0x1002, name: "Sensor Mode", type: V4L2_CTRL_TYPE_INTEGER_MENU.rawValue, maximum: 2, value: 0,
            intMenu: [0: 720, 1: 1080, 2: 2160], busyWhileStreaming: true),
        Control(id: 0x009a_0001, name: "Camera Controls", type: V4L2_CTRL_TYPE_CTRL_CLASS.rawValue, maximum: 0, step: 0, flags: 0x44),
        Control(
            id: cv4l2_CID_EXPOSURE_AUTO, name: "Auto Exposure", type: V4L2_CTRL_TYPE_MENU.rawValue, maximum: 3, defaultValue: 3,
            value: 3, menu: [1: "Manual Mode", 3: "Aperture Priority Mode"]),
        Control(
            id: cv4l2_CID_EXPOSURE_ABSOLUTE, name: "Exposure Time, Absolute", minimum: 3, maximum: 2047, defaultValue: 250,
            value: 250, flags: 0x10, clampTo: 1250),
        Control(
            id: cv4l2_CID_FOCUS_ABSOLUTE, name: "Focus, Absolute", minimum: 0, maximum: 250, step: 5, defaultValue: 0, value: 0,
            flags: 0x10),
        Control(
            id: cv4l2_CID_FOCUS_AUTO, name: "Focus, Automatic Continuous", type: V4L2_CTRL_TYPE_BOOLEAN.rawValue, maximum: 1,
            defaultValue: 1, value: 1),
        Control(id: cv4l2_CID_ZOOM_ABSOLUTE, name: "Zoom, Absolute", minimum: 100, maximum: 500, defaultValue: 100, value: 100)
    ]

    let state = Mutex(State())

    init(nodes: [String: Node] = ["/dev/video0": Node(modes: FakeKernel.webcamModes, controls: FakeKernel.webcamControls)]) {
        state.withLock { $0.nodes = nodes }
    }

    static let webcamModes: [Mode] = [
        Mode(fourCC: cv4l2_PIX_FMT_YUYV, width: 640, height: 480), Mode(fourCC: cv4l2_PIX_FMT_YUYV, width: 1280, height: 720),
        Mode(fourCC: cv4l2_PIX_FMT_NV12, width: 640, height: 480), Mode(fourCC: cv4l2_PIX_FMT_NV12, width: 1280, height: 720),
        Mode(fourCC: cv4l2_PIX_FMT_MJPEG, width: 640, height: 480)
    ]

    func with<R>(_ body: (inout State) -> R) -> R { state.withLock { body(&$0) } }
    func calls(_ name: String) -> Int { with { $0.calls[name] ?? 0 } }
    func setScript(_ steps: [Step]) { with { $0.script = steps } }
    func append(_ steps: [Step]) { with { $0.script += steps } }

    private func count(_ s: inout State, _ name: String) -> Bool {
        s.calls[name, default: 0] += 1
        if s.interruptNext > 0 {
            s.interruptNext -= 1
            s.calls["EINTR", default: 0] += 1
            return true
        }
        return false
    }

    // MARK: V4L2Kernel

    func open(_ path: String, flags: Int32) -> (result: Int, errno: Int32) {
        with { s in
            if count(&s, "open") { return (-1, EINTR) }
            guard let node = s.nodes[path] else { return (-1, ENOENT) }
            if node.denied { return (-1, EACCES) }
            let fd = s.nextFD
            s.nextFD += 1
            s.fds[fd] = path
            return (Int(fd), 0)
        }
    }

    func attachLibV4L2(_ fd: Int32) -> (result: Int, errno: Int32) { (Int(fd), 0) }

    /// Called after a QBUF of a buffer that was queued before (a re-queue, not the first of a
    /// stream), outside the fake's lock, with the buffer's index: tests widen races there.
    let afterRequeue = Mutex<(@Sendable (Int) -> Void)?>(nil)

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer, raw: Bool) -> (result: Int, errno: Int32) {
        let answer = answer(fd, request, argument)
        if request == cv4l2_VIDIOC_QBUF, answer.result == 0, let hook = afterRequeue.withLock({ $0 }) {
            let index = Int(argument.assumingMemoryBound(to: v4l2_buffer.self).pointee.index)
            if with({ $0.qbufPerIndex[index, default: 0] }) > 1 { hook(index) }
        }
        return answer
    }

    private func answer(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> (result: Int, errno: Int32) {
        with { s in
            let name = Self.name(request)
            if count(&s, name) { return (-1, EINTR) }
            guard let path = s.fds[fd], let node = s.nodes[path] else { return (-1, EBADF) }
            switch request {
            case cv4l2_VIDIOC_QUERYCAP:
                let caps = argument.assumingMemoryBound(to: v4l2_capability.self)
                caps.pointee = v4l2_capability()
                withUnsafeMutableBytes(of: &caps.pointee.driver) { copy("fake", into: $0) }
                withUnsafeMutableBytes(of: &caps.pointee.card) { copy("Fake Camera", into: $0) }
                let c = node.capture ? UInt32(V4L2_CAP_VIDEO_CAPTURE) | UInt32(V4L2_CAP_STREAMING) : UInt32(V4L2_CAP_META_CAPTURE)
                caps.pointee.capabilities = c | UInt32(V4L2_CAP_DEVICE_CAPS)
                caps.pointee.device_caps = c
                return (0, 0)
            case cv4l2_VIDIOC_ENUM_FMT:
                let desc = argument.assumingMemoryBound(to: v4l2_fmtdesc.self)
                var codes: [UInt32] = []
                for m in node.modes where !codes.contains(m.fourCC) { codes.append(m.fourCC) }
                guard Int(desc.pointee.index) < codes.count else { return (-1, EINVAL) }
                desc.pointee.pixelformat = codes[Int(desc.pointee.index)]
                desc.pointee.flags = 0
                return (0, 0)
            case cv4l2_VIDIOC_ENUM_FRAMESIZES:
                let fs = argument.assumingMemoryBound(to: v4l2_frmsizeenum.self)
                let sizes = node.modes.filter { $0.fourCC == fs.pointee.pixel_format }
                guard Int(fs.pointee.index) < sizes.count else { return (-1, EINVAL) }
                fs.pointee.type = V4L2_FRMSIZE_TYPE_DISCRETE.rawValue
                fs.pointee.discrete = v4l2_frmsize_discrete(
                    width: UInt32(sizes[Int(fs.pointee.index)].width),
                    height: UInt32(sizes[Int(fs.pointee.index)].height))
                return (0, 0)
            case cv4l2_VIDIOC_ENUM_FRAMEINTERVALS:
                let fi = argument.assumingMemoryBound(to: v4l2_frmivalenum.self)
                guard Int(fi.pointee.index) < node.rates.count else { return (-1, EINVAL) }
                fi.pointee.type = V4L2_FRMIVAL_TYPE_DISCRETE.rawValue
                fi.pointee.discrete = v4l2_fract(numerator: 1000, denominator: UInt32(node.rates[Int(fi.pointee.index)] * 1000))
                return (0, 0)
            case cv4l2_VIDIOC_S_FMT:
                let fmt = argument.assumingMemoryBound(to: v4l2_format.self)
                var pix = fmt.pointee.fmt.pix
                if let (w, h) = s.adjustSizeTo {
                    pix.width = UInt32(w)
                    pix.height = UInt32(h)
                }
                guard node.modes.contains(where: { $0.fourCC == pix.pixelformat }) else { return (-1, EINVAL) }
                if s.busyFormatWhileAllocated && !s.buffers.isEmpty { return (-1, EBUSY) }
                let bpp = pix.pixelformat == cv4l2_PIX_FMT_YUYV ? 2 : 1
                s.bytesPerLine = Int(pix.width) * bpp + s.rowPadding
                pix.bytesperline = UInt32(s.bytesPerLine)
                pix.sizeimage = UInt32(
                    pix.pixelformat == cv4l2_PIX_FMT_NV12
                        ? s.bytesPerLine * Int(pix.height) * 3 / 2
                        : s.bytesPerLine * Int(pix.height))
                if pix.pixelformat == cv4l2_PIX_FMT_MJPEG { pix.sizeimage = UInt32(pix.width * pix.height) }
                fmt.pointee.fmt.pix = pix
                s.format = Mode(fourCC: pix.pixelformat, width: Int(pix.width), height: Int(pix.height))
                s.formats.append("\(pix.width)x\(pix.height)")
                return (0, 0)
            case cv4l2_VIDIOC_S_PARM:
                let parm = argument.assumingMemoryBound(to: v4l2_streamparm.self)
                let t = parm.pointee.parm.capture.timeperframe
                s.frameRate = Double(t.denominator) / Double(max(1, t.numerator))
                return (0, 0)
            case cv4l2_VIDIOC_REQBUFS:
                if s.failNextReqbufs != 0 {
                    defer { s.failNextReqbufs = 0 }
                    return (-1, s.failNextReqbufs)
                }
                let req = argument.assumingMemoryBound(to: v4l2_requestbuffers.self)
                s.orphaned += s.buffers
                s.buffers = []
                s.queued = []
                guard req.pointee.count > 0, let format = s.format else { return (0, 0) }
                s.bufferLength =
                    format.fourCC == cv4l2_PIX_FMT_MJPEG
                    ? format.width * format.height
                    : s.bytesPerLine * format.height * (format.fourCC == cv4l2_PIX_FMT_NV12 ? 3 : 2) / 2
                s.buffers = (0..<Int(req.pointee.count)).map { _ in
                    DriverMemory(pointer: UnsafeMutableRawPointer.allocate(byteCount: s.bufferLength, alignment: 4096))
                }
                return (0, 0)
            case cv4l2_VIDIOC_QUERYBUF:
                let buf = argument.assumingMemoryBound(to: v4l2_buffer.self)
                guard Int(buf.pointee.index) < s.buffers.count else { return (-1, EINVAL) }
                buf.pointee.length = UInt32(s.bufferLength)
                buf.pointee.m.offset = buf.pointee.index * 4096
                return (0, 0)
            case cv4l2_VIDIOC_QBUF:
                let buf = argument.assumingMemoryBound(to: v4l2_buffer.self)
                let index = Int(buf.pointee.index)
                guard index < s.buffers.count, !s.queued.contains(index) else { return (-1, EINVAL) }
                s.queued.append(index)
                s.qbufPerIndex[index, default: 0] += 1
                return (0, 0)
            case cv4l2_VIDIOC_STREAMON:
                if s.failNextStreamon != 0 {
                    defer { s.failNextStreamon = 0 }
                    return (-1, s.failNextStreamon)
                }
                s.streaming = true
                s.streamCounter = 0
                return (0, 0)
            case cv4l2_VIDIOC_STREAMOFF:
                s.streaming = false
                s.queued = []
                return (0, 0)
            case cv4l2_VIDIOC_DQBUF:
                return dequeue(&s, argument.assumingMemoryBound(to: v4l2_buffer.self))
            case cv4l2_VIDIOC_QUERY_EXT_CTRL:
                let q = argument.assumingMemoryBound(to: v4l2_query_ext_ctrl.self)
                let asked = q.pointee.id
                let next = asked & (cv4l2_CTRL_FLAG_NEXT_CTRL | cv4l2_CTRL_FLAG_NEXT_COMPOUND) != 0
                let id = asked & cv4l2_CTRL_ID_MASK
                let sorted = node.controls.sorted { $0.id < $1.id }
                guard let c = next ? sorted.first(where: { $0.id > id }) : sorted.first(where: { $0.id == id }) else { return (-1, EINVAL) }
                q.pointee = v4l2_query_ext_ctrl()
                q.pointee.id = c.id
                q.pointee.type = c.type
                withUnsafeMutableBytes(of: &q.pointee.name) { copy(c.name, into: $0) }
                q.pointee.minimum = c.minimum
                q.pointee.maximum = c.maximum
                q.pointee.step = c.step
                q.pointee.default_value = c.defaultValue
                q.pointee.flags = c.flags | (s.streaming && c.busyWhileStreaming ? 0x2 : 0)
                return (0, 0)
            case cv4l2_VIDIOC_QUERYMENU:
                guard let c = node.controls.first(where: { $0.id == cv4l2_querymenu_id(argument) }) else { return (-1, EINVAL) }
                let index = cv4l2_querymenu_index(argument)
                if let name = c.menu[index] {
                    name.withCString { cv4l2_querymenu_answer(argument, $0, 0) }
                } else if let number = c.intMenu[index] {
                    cv4l2_querymenu_answer(argument, nil, number)
                } else {
                    return (-1, EINVAL)
                }
                return (0, 0)
            case cv4l2_VIDIOC_G_EXT_CTRLS, cv4l2_VIDIOC_S_EXT_CTRLS:
                return extControls(&s, fd: fd, path: path, request: argument, set: request == cv4l2_VIDIOC_S_EXT_CTRLS)
            case cv4l2_VIDIOC_SUBSCRIBE_EVENT:
                let sub = argument.assumingMemoryBound(to: v4l2_event_subscription.self)
                guard sub.pointee.type == cv4l2_EVENT_CTRL, node.controls.contains(where: { $0.id == sub.pointee.id }) else {
                    return (-1, EINVAL)
                }
                s.subscriptions[fd, default: []].insert(sub.pointee.id)
                return (0, 0)
            case cv4l2_VIDIOC_DQEVENT:
                guard var queue = s.events[fd], !queue.isEmpty else { return (-1, ENOENT) }
                let e = queue.removeFirst()
                s.events[fd] = queue
                let event = argument.assumingMemoryBound(to: v4l2_event.self)
                event.pointee = v4l2_event()
                event.pointee.type = cv4l2_EVENT_CTRL
                event.pointee.id = e.id
                event.pointee.u.ctrl.changes = e.changes
                event.pointee.u.ctrl.type = e.type
                if e.type == V4L2_CTRL_TYPE_INTEGER64.rawValue {
                    event.pointee.u.ctrl.value64 = e.value
                } else {
                    event.pointee.u.ctrl.value = Int32(truncatingIfNeeded: e.value)
                }
                event.pointee.u.ctrl.flags = e.flags
                event.pointee.pending = UInt32(queue.count)
                return (0, 0)
            default:
                return (-1, ENOTTY)
            }
        }
    }

    /// G/S_EXT_CTRLS of one control, as the kernel's control framework answers: EACCES for
    /// read-only, EBUSY for grabbed, values clamped to the range and rounded to the step; a set
    /// queues an event for every other descriptor subscribed to the control.
    private func extControls(
        _ s: inout State, fd: Int32, path: String, request: UnsafeMutableRawPointer, set: Bool
    ) -> (result: Int, errno: Int32) {
        guard cv4l2_ext_controls_count(request) == 1, let item = cv4l2_ext_controls_controls(request) else { return (-1, EINVAL) }
        let id = cv4l2_ext_control_id(item)
        guard var node = s.nodes[path], let index = node.controls.firstIndex(where: { $0.id == id }) else { return (-1, EINVAL) }
        var c = node.controls[index]
        let is64: Int32 = c.type == V4L2_CTRL_TYPE_INTEGER64.rawValue ? 1 : 0
        if !set {
            if c.flags & 0x40 != 0 { return (-1, EACCES) }
            cv4l2_ext_control_set_value(item, c.value, is64)
            return (0, 0)
        }
        if c.flags & 0x4 != 0 { return (-1, EACCES) }
        if c.busyWhileStreaming && s.streaming { return (-1, EBUSY) }
        var value = cv4l2_ext_control_value(item, is64)
        if c.type == V4L2_CTRL_TYPE_MENU.rawValue && c.menu[UInt32(clamping: value)] == nil { return (-1, EINVAL) }
        value = min(max(value, c.minimum), c.clampTo ?? c.maximum)
        if c.step > 1 { value = c.minimum + (value - c.minimum) / Int64(c.step) * Int64(c.step) }
        c.value = value
        node.controls[index] = c
        s.sets.append((id, value))
        // Auto clusters: a manual value is inactive while its automatic mode is on.
        func setInactive(_ target: UInt32, _ inactive: Bool) {
            guard let i = node.controls.firstIndex(where: { $0.id == target }) else { return }
            node.controls[i].flags = inactive ? node.controls[i].flags | 0x10 : node.controls[i].flags & ~0x10
        }
        if id == cv4l2_CID_EXPOSURE_AUTO { setInactive(cv4l2_CID_EXPOSURE_ABSOLUTE, value != 1) }
        if id == cv4l2_CID_AUTO_WHITE_BALANCE { setInactive(cv4l2_CID_WHITE_BALANCE_TEMPERATURE, value != 0) }
        if id == cv4l2_CID_FOCUS_AUTO { setInactive(cv4l2_CID_FOCUS_ABSOLUTE, value != 0) }
        s.nodes[path] = node
        cv4l2_ext_control_set_value(item, value, is64)
        post(&s, path: path, id: id, except: fd)
        return (0, 0)
    }

    private func post(_ s: inout State, path: String, id: UInt32, except: Int32?) {
        guard let c = s.nodes[path]?.controls.first(where: { $0.id == id }) else { return }
        for (other, ids) in s.subscriptions where other != except && ids.contains(id) && s.fds[other] == path {
            s.events[other, default: []].append((id, cv4l2_EVENT_CTRL_CH_VALUE, c.value, c.flags, c.type))
        }
    }

    /// The driver changes a control by itself (an automatic gain moving): subscribers hear of it.
    func driverChanges(_ id: UInt32, to value: Int64, on path: String = "/dev/video0") {
        with { s in
            guard let i = s.nodes[path]?.controls.firstIndex(where: { $0.id == id }) else { return }
            s.nodes[path]!.controls[i].value = value
            post(&s, path: path, id: id, except: nil)
        }
    }

    func controlValue(_ id: UInt32, on path: String = "/dev/video0") -> Int64? {
        with { $0.nodes[path]?.controls.first(where: { $0.id == id })?.value }
    }

    private func dequeue(_ s: inout State, _ buf: UnsafeMutablePointer<v4l2_buffer>) -> (result: Int, errno: Int32) {
        guard s.streaming, !s.script.isEmpty, !s.queued.isEmpty else { return (-1, EAGAIN) }
        var step = s.script.removeFirst()
        if case .counted = step {
            step = .frame(sequence: s.streamCounter)
            s.streamCounter += 1
        }
        switch step {
        case .counted:
            return (-1, EINVAL)
        case .fail(let errno):
            return (-1, errno)
        case .frame(let sequence, let error):
            let index = s.queued.removeFirst()
            s.dqbufPerIndex[index, default: 0] += 1
            let format = s.format!
            // Luma = sequence number, so tests can tell frames apart.
            let fill = UInt8(truncatingIfNeeded: sequence)
            s.buffers[index].pointer.initializeMemory(as: UInt8.self, repeating: fill, count: s.bufferLength)
            if format.fourCC == cv4l2_PIX_FMT_MJPEG, let jpeg = s.jpegFrame {
                jpeg.withUnsafeBytes {
                    s.buffers[index].pointer.copyMemory(from: $0.baseAddress!, byteCount: min($0.count, s.bufferLength))
                }
            }
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            buf.pointee.index = UInt32(index)
            buf.pointee.sequence = sequence
            buf.pointee.bytesused = UInt32(format.fourCC == cv4l2_PIX_FMT_MJPEG ? (s.jpegFrame?.count ?? 0) : s.bufferLength)
            buf.pointee.flags = UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC) | (error ? UInt32(V4L2_BUF_FLAG_ERROR) : 0)
            buf.pointee.timestamp = timeval(tv_sec: ts.tv_sec, tv_usec: ts.tv_nsec / 1000)
            return (0, 0)
        }
    }

    func mmap(_ fd: Int32, length: Int, offset: Int64) -> (pointer: UnsafeMutableRawPointer?, errno: Int32) {
        with { s in
            _ = count(&s, "mmap")
            let index = Int(offset / 4096)
            guard index < s.buffers.count, length <= s.bufferLength else { return (nil, EINVAL) }
            return (s.buffers[index].pointer, 0)
        }
    }

    func munmap(_ pointer: UnsafeMutableRawPointer, length: Int) { with { _ = count(&$0, "munmap") } }

    func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) -> (result: Int, revents: Int16, errno: Int32) {
        let revents: Int16? = with { s in
            if count(&s, "poll") { return nil }
            // vb2 (videobuf2-core's poll): streaming with no buffer queued is POLLERR at once.
            if s.streaming && s.queued.isEmpty { return Int16(POLLERR) }
            let frame = s.streaming && !s.script.isEmpty
            let event = !(s.events[fd]?.isEmpty ?? true) && events & Int16(POLLPRI) != 0
            return (frame ? Int16(POLLIN) : 0) | (event ? Int16(POLLPRI) : 0)
        }
        guard let revents else { return (-1, 0, EINTR) }
        if revents != 0 { return (1, revents, 0) }
        usleep(UInt32(min(Int(timeoutMilliseconds), 5)) * 1000) // nothing scripted yet: a short timeout
        return (0, 0, 0)
    }

    func close(_ fd: Int32) {
        with { s in
            _ = count(&s, "close")
            if let path = s.fds[fd], s.locks[path] == fd { s.locks[path] = nil } // a lock ends with its descriptor
            s.fds[fd] = nil
            s.subscriptions[fd] = nil
            s.events[fd] = nil
        }
    }
    func deviceNodes() -> [String] { with { $0.nodes.keys.sorted() } }
    func isAccessible(_ path: String) -> Bool { with { !($0.nodes[path]?.denied ?? true) } }
    func flock(_ fd: Int32, lock: Bool) -> (result: Int, errno: Int32) {
        with { s in
            _ = count(&s, "flock")
            guard let path = s.fds[fd] else { return (-1, EBADF) }
            if !lock {
                if s.locks[path] == fd { s.locks[path] = nil }
                return (0, 0)
            }
            if let holder = s.locks[path], holder != fd { return (-1, EWOULDBLOCK) }
            s.locks[path] = fd
            return (0, 0)
        }
    }

    static func name(_ request: UInt) -> String {
        switch request {
        case cv4l2_VIDIOC_QUERYCAP: "QUERYCAP"
        case cv4l2_VIDIOC_ENUM_FMT: "ENUM_FMT"
        case cv4l2_VIDIOC_S_FMT: "S_FMT"
        case cv4l2_VIDIOC_S_PARM: "S_PARM"
        case cv4l2_VIDIOC_REQBUFS: "REQBUFS"
        case cv4l2_VIDIOC_QUERYBUF: "QUERYBUF"
        case cv4l2_VIDIOC_QBUF: "QBUF"
        case cv4l2_VIDIOC_DQBUF: "DQBUF"
        case cv4l2_VIDIOC_STREAMON: "STREAMON"
        case cv4l2_VIDIOC_STREAMOFF: "STREAMOFF"
        case cv4l2_VIDIOC_QUERY_EXT_CTRL: "QUERY_EXT_CTRL"
        case cv4l2_VIDIOC_QUERYMENU: "QUERYMENU"
        case cv4l2_VIDIOC_G_EXT_CTRLS: "G_EXT_CTRLS"
        case cv4l2_VIDIOC_S_EXT_CTRLS: "S_EXT_CTRLS"
        case cv4l2_VIDIOC_SUBSCRIBE_EVENT: "SUBSCRIBE_EVENT"
        case cv4l2_VIDIOC_DQEVENT: "DQEVENT"
        default: "other"
        }
    }
}

private func copy(_ text: String, into buffer: UnsafeMutableRawBufferPointer) {
    for (i, byte) in text.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
}

/// A session (not started) on a camera whose kernel plays `script`, `recorder` its delegate.
func scriptedSession(
    _ script: [FakeKernel.Step], recorder: Recorder, discardsLate: Bool = true
) throws -> (CaptureSession, VideoDataOutput, FakeKernel) {
    let kernel = FakeKernel()
    kernel.setScript(script)
    let (session, output) = try makeSession(
        try CaptureDevice.v4l2(path: "/dev/video0", kernel: kernel), recorder: recorder, discardsLate: discardsLate)
    return (session, output, kernel)
}

/// Plays `script` through a session until its delegate has heard of `frames` frames (delivered
/// or dropped), then stops it; nil if they did not all come within the wait.
func play(_ script: [FakeKernel.Step], frames: Int, discardsLate: Bool = true) throws -> (Recorder, VideoDataOutput)? {
    let recorder = Recorder()
    let (session, output, _) = try scriptedSession(script, recorder: recorder, discardsLate: discardsLate)
    try session.startRunning()
    defer { session.stopRunning() }
    return recorder.wait { $0.frames.count + $0.drops.count == frames } ? (recorder, output) : nil
}
