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

    func count(_ s: inout State, _ name: String) -> Bool {
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
