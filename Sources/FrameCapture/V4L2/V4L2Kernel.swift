import CV4L2
import FrameCore

#if canImport(Glibc)
import Glibc
#endif

/// The system calls the V4L2 backend makes, behind one protocol so that tests can play the
/// kernel. Each returns the raw result and the errno read right after the call; the backend
/// passes every call through ``retryingSystemCall(_:_:)``, which retries EINTR and throws.
package protocol V4L2Kernel: Sendable {
    func open(_ path: String, flags: Int32) -> (result: Int, errno: Int32)
    /// Hands the descriptor to libv4l2 (a no-op for a fake kernel).
    func attachLibV4L2(_ fd: Int32) -> (result: Int, errno: Int32)
    /// `ioctl` through libv4l2, or through plain `ioctl(2)` when `raw`.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer, raw: Bool) -> (result: Int, errno: Int32)
    func mmap(_ fd: Int32, length: Int, offset: Int64) -> (pointer: UnsafeMutableRawPointer?, errno: Int32)
    func munmap(_ pointer: UnsafeMutableRawPointer, length: Int)
    /// `poll` for one descriptor; `result` is the number ready (0 on timeout), `revents` what.
    func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) -> (result: Int, revents: Int16, errno: Int32)
    func close(_ fd: Int32)
    /// The device nodes to consider for discovery (`/dev/video*`).
    func deviceNodes() -> [String]
    /// Whether this user may read and write `path` (`access(2)`).
    func isAccessible(_ path: String) -> Bool
    /// `flock(2)` without waiting: an exclusive lock (`lock`) or its release, for
    /// ``CaptureDevice/lockForConfiguration()`` across processes.
    func flock(_ fd: Int32, lock: Bool) -> (result: Int, errno: Int32)
}

/// The real kernel, through libv4l2.
package struct SystemV4L2Kernel: V4L2Kernel {
    package init() {}

    package func open(_ path: String, flags: Int32) -> (result: Int, errno: Int32) {
        let fd = Glibc.open(path, flags)
        return (Int(fd), Glibc.errno)
    }
    package func attachLibV4L2(_ fd: Int32) -> (result: Int, errno: Int32) {
        let r = cv4l2_fd_open(fd)
        return (Int(r), Glibc.errno)
    }
    package func ioctl(_ fd: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer, raw: Bool) -> (result: Int, errno: Int32) {
        let r = raw ? cv4l2_raw_ioctl(fd, request, argument) : cv4l2_ioctl(fd, request, argument)
        return (Int(r), Glibc.errno)
    }
    package func mmap(_ fd: Int32, length: Int, offset: Int64) -> (pointer: UnsafeMutableRawPointer?, errno: Int32) {
        let p = cv4l2_mmap(length, fd, offset)
        let e = Glibc.errno
        return p == cv4l2_map_failed() ? (nil, e) : (p, 0)
    }
    package func munmap(_ pointer: UnsafeMutableRawPointer, length: Int) { _ = cv4l2_munmap(pointer, length) }
    package func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) -> (result: Int, revents: Int16, errno: Int32) {
        var p = pollfd(fd: fd, events: events, revents: 0)
        let r = Glibc.poll(&p, 1, timeoutMilliseconds)
        return (Int(r), p.revents, Glibc.errno)
    }
    package func close(_ fd: Int32) { _ = cv4l2_close(fd) }
    package func deviceNodes() -> [String] {
        guard let dir = opendir("/dev") else { return [] }
        defer { closedir(dir) }
        var nodes: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name.hasPrefix("video"), Int(name.dropFirst(5)) != nil { nodes.append("/dev/\(name)") }
        }
        return nodes.sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
    }
    package func isAccessible(_ path: String) -> Bool { access(path, R_OK | W_OK) == 0 }
    package func flock(_ fd: Int32, lock: Bool) -> (result: Int, errno: Int32) {
        let r = cv4l2_flock(fd, lock ? 1 : 0)
        return (Int(r), Glibc.errno)
    }
}

/// An open V4L2 descriptor: every ioctl through the one retrying door, named for errors.
final class V4L2Handle: Sendable {
    let kernel: any V4L2Kernel
    let path: String
    let fd: Int32

    /// Opens `path`, checks it is a streaming capture node (with a plain ioctl, so a non-camera
    /// fails here and not inside libv4l2), then hands it to libv4l2.
    init(path: String, kernel: any V4L2Kernel) throws(CaptureError) {
        self.kernel = kernel
        self.path = path
        let fd: Int
        do {
            fd = try retryingSystemCall("open(\(path))") { kernel.open(path, flags: O_RDWR | O_NONBLOCK | O_CLOEXEC) }
        } catch {
            switch error.errno {
            case EACCES, EPERM: throw .permissionDenied(path: path)
            case ENODEV, ENXIO: throw .deviceLost(path: path)
            case EBUSY: throw .deviceBusy(path: path)
            default: throw .systemCall(path: path, error)
            }
        }
        self.fd = Int32(fd)
        var caps = v4l2_capability()
        do {
            try Self.ioctl(kernel, self.fd, path, cv4l2_VIDIOC_QUERYCAP, "VIDIOC_QUERYCAP", &caps, raw: true)
        } catch {
            kernel.close(self.fd)
            throw error
        }
        let effective = caps.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? caps.device_caps : caps.capabilities
        guard effective & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 else {
            kernel.close(self.fd)
            throw .notACaptureDevice(path: path, reason: "no single-planar video capture capability")
        }
        guard effective & UInt32(V4L2_CAP_STREAMING) != 0 else {
            kernel.close(self.fd)
            throw .notACaptureDevice(path: path, reason: "no streaming I/O")
        }
        _ = kernel.attachLibV4L2(self.fd) // libv4l2 declining is not fatal: plain ioctls still work
        self.capability = V4L2Capability(caps)
    }

    let capability: V4L2Capability

    deinit { kernel.close(fd) }

    /// One ioctl on a byte buffer (V4L2's packed structs), failing with the raw errno, for
    /// callers that give errnos their own meaning (the control calls).
    func ioctl(_ request: UInt, _ name: String, bytes: UnsafeMutableRawPointer) throws(SystemCallError) {
        _ = try retryingSystemCall("ioctl(\(name))") { kernel.ioctl(fd, request, bytes, raw: false) }
    }

    /// As ``ioctl(_:_:_:raw:)``, failing with the raw errno.
    func rawErrnoIoctl<T>(_ request: UInt, _ name: String, _ argument: inout T) throws(SystemCallError) {
        let kernel = self.kernel
        let fd = self.fd
        _ = try withUnsafeMutableBytes(of: &argument) { (bytes) throws(SystemCallError) -> Int in
            try retryingSystemCall("ioctl(\(name))") { kernel.ioctl(fd, request, bytes.baseAddress!, raw: false) }
        }
    }

    /// One ioctl through ``retryingSystemCall(_:_:)``; a failure carries the request's name.
    func ioctl<T>(_ request: UInt, _ name: String, _ argument: inout T, raw: Bool = false) throws(CaptureError) {
        try Self.ioctl(kernel, fd, path, request, name, &argument, raw: raw)
    }

    private static func ioctl<T>(
        _ kernel: any V4L2Kernel, _ fd: Int32, _ path: String, _ request: UInt, _ name: String,
        _ argument: inout T, raw: Bool
    ) throws(CaptureError) {
        do {
            _ = try withUnsafeMutableBytes(of: &argument) { (bytes) throws(SystemCallError) -> Int in
                try retryingSystemCall("ioctl(\(name))") { kernel.ioctl(fd, request, bytes.baseAddress!, raw: raw) }
            }
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// Maps errnos that mean something to a capture session; the rest stay system-call errors.
    static func classify(_ error: SystemCallError, path: String) -> CaptureError {
        switch error.errno {
        case ENODEV, ENXIO: .deviceLost(path: path)
        case EACCES, EPERM: .permissionDenied(path: path)
        case EBUSY: .deviceBusy(path: path)
        default: .systemCall(path: path, error)
        }
    }
}

/// What VIDIOC_QUERYCAP said.
package struct V4L2Capability: Sendable, Equatable {
    package var driver: String
    package var card: String
    package var busInfo: String

    init(_ caps: v4l2_capability) {
        func text<T>(_ tuple: T) -> String {
            withUnsafeBytes(of: tuple) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        }
        driver = text(caps.driver)
        card = text(caps.card)
        busInfo = text(caps.bus_info)
    }
}
