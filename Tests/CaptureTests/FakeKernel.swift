import CV4L2
import Foundation
import FrameKit
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
    }

    struct State {
        var nodes: [String: Node] = [:]
        var fds: [Int32: String] = [:]
        var nextFD: Int32 = 100
        var script: [Step] = []
        var buffers: [UnsafeMutableRawPointer] = []
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
        var rowPadding = 0 // extra bytes per row, to test strides
        var adjustSizeTo: (Int, Int)? // S_FMT answers with another size
        var jpegFrame: [UInt8]? // what MJPEG modes deliver
    }

    struct Node {
        var capture = true
        var denied = false
        var modes: [Mode] = []
        var rates: [Double] = [30, 15]
    }

    let state = Mutex(SendableBox(State()))

    init(nodes: [String: Node] = ["/dev/video0": Node(modes: FakeKernel.webcamModes)]) {
        state.withLock { $0.value.nodes = nodes }
    }

    static let webcamModes: [Mode] = [
        Mode(fourCC: cv4l2_PIX_FMT_YUYV, width: 640, height: 480), Mode(fourCC: cv4l2_PIX_FMT_YUYV, width: 1280, height: 720),
        Mode(fourCC: cv4l2_PIX_FMT_NV12, width: 640, height: 480), Mode(fourCC: cv4l2_PIX_FMT_NV12, width: 1280, height: 720),
        Mode(fourCC: cv4l2_PIX_FMT_MJPEG, width: 640, height: 480)
    ]

    func with<R>(_ body: (inout State) -> R) -> R { state.withLock { body(&$0.value) } }
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

    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer, raw: Bool) -> (result: Int, errno: Int32) {
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
                for b in s.buffers { b.deallocate() }
                s.buffers = []
                s.queued = []
                guard req.pointee.count > 0, let format = s.format else { return (0, 0) }
                s.bufferLength =
                    format.fourCC == cv4l2_PIX_FMT_MJPEG
                    ? format.width * format.height
                    : s.bytesPerLine * format.height * (format.fourCC == cv4l2_PIX_FMT_NV12 ? 3 : 2) / 2
                s.buffers = (0..<Int(req.pointee.count)).map { _ in
                    UnsafeMutableRawPointer.allocate(byteCount: s.bufferLength, alignment: 4096)
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
                return (0, 0)
            case cv4l2_VIDIOC_STREAMOFF:
                s.streaming = false
                s.queued = []
                return (0, 0)
            case cv4l2_VIDIOC_DQBUF:
                return dequeue(&s, argument.assumingMemoryBound(to: v4l2_buffer.self))
            default:
                return (-1, ENOTTY)
            }
        }
    }

    private func dequeue(_ s: inout State, _ buf: UnsafeMutablePointer<v4l2_buffer>) -> (result: Int, errno: Int32) {
        guard s.streaming, !s.script.isEmpty, !s.queued.isEmpty else { return (-1, EAGAIN) }
        switch s.script.removeFirst() {
        case .fail(let errno):
            return (-1, errno)
        case .frame(let sequence, let error):
            let index = s.queued.removeFirst()
            let format = s.format!
            // Luma = sequence number, so tests can tell frames apart.
            let fill = UInt8(truncatingIfNeeded: sequence)
            s.buffers[index].initializeMemory(as: UInt8.self, repeating: fill, count: s.bufferLength)
            if format.fourCC == cv4l2_PIX_FMT_MJPEG, let jpeg = s.jpegFrame {
                jpeg.withUnsafeBytes { s.buffers[index].copyMemory(from: $0.baseAddress!, byteCount: min($0.count, s.bufferLength)) }
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
            return (s.buffers[index], 0)
        }
    }

    func munmap(_ pointer: UnsafeMutableRawPointer, length: Int) { with { _ = count(&$0, "munmap") } }

    func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) -> (result: Int, revents: Int16, errno: Int32) {
        let ready: Bool? = with { s in
            if count(&s, "poll") { return nil }
            return s.streaming && !s.script.isEmpty && !s.queued.isEmpty
        }
        guard let ready else { return (-1, 0, EINTR) }
        if ready { return (1, Int16(POLLIN), 0) }
        usleep(UInt32(min(Int(timeoutMilliseconds), 5)) * 1000) // nothing scripted yet: a short timeout
        return (0, 0, 0)
    }

    func close(_ fd: Int32) {
        with { s in
            _ = count(&s, "close")
            s.fds[fd] = nil
        }
    }
    func deviceNodes() -> [String] { with { $0.nodes.keys.sorted() } }
    func isAccessible(_ path: String) -> Bool { with { !($0.nodes[path]?.denied ?? true) } }

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
        default: "other"
        }
    }
}

private func copy(_ text: String, into buffer: UnsafeMutableRawBufferPointer) {
    for (i, byte) in text.utf8.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
}
