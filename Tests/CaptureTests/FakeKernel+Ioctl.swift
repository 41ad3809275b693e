import CV4L2
import Foundation
import FrameKit

/// The fake kernel's answers to ioctls: each request as the V4L2 core and a driver answer it,
/// on the fake's state, under its lock.
extension FakeKernel {
    func answer(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer) -> (result: Int, errno: Int32) {
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
    func extControls(
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

    func post(_ s: inout State, path: String, id: UInt32, except: Int32?) {
        guard let c = s.nodes[path]?.controls.first(where: { $0.id == id }) else { return }
        for (other, ids) in s.subscriptions where other != except && ids.contains(id) && s.fds[other] == path {
            s.events[other, default: []].append((id, cv4l2_EVENT_CTRL_CH_VALUE, c.value, c.flags, c.type))
        }
    }

    func dequeue(_ s: inout State, _ buf: UnsafeMutablePointer<v4l2_buffer>) -> (result: Int, errno: Int32) {
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
}

private func copy(_ text: String, into buffer: UnsafeMutableRawBufferPointer) {
    for (i, byte) in text.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
}
