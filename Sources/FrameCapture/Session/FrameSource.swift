import FrameCore

/// What a session asks a source to deliver: chosen from the device's ``CaptureDevice/formats``
/// by the session's preset (or the device's ``CaptureDevice/activeFormat``) before it starts.
public struct SourceConfiguration: Sendable {
    public var format: CaptureDeviceFormat
    /// The format frames leave the source in: the device format's own, or for compressed
    /// formats the format they are decoded into.
    public var pixelFormat: PixelFormat
    public var frameRate: Double
    /// Driver or pool buffers (the bound on frames in flight).
    public var bufferCount: Int

    public init(format: CaptureDeviceFormat, pixelFormat: PixelFormat, frameRate: Double, bufferCount: Int) {
        self.format = format
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.bufferCount = bufferCount
    }
}

/// One step of a source.
public enum SourceEvent {
    case frame(SampleBuffer)
    case dropped(DroppedFrame)
    /// Nothing yet (a poll timed out): the capture loop checks whether to stop and asks again.
    case idle
    /// Something to tell the session's observers while capture goes on (a stream that dropped
    /// and is being reconnected, and its return).
    case notice(SessionNotification)
    case endOfStream
}

/// A producer of frames, driven by a session's capture thread: `start`, then `next` until it
/// ends or the session stops it. Used from that one thread only (buffers it hands out may be
/// released on any thread). FrameKit's own sources are V4L2 cameras, the virtual camera and
/// FrameKit's file readers here, and libavformat's files and streams in FrameMedia; a program
/// brings its own (a GStreamer appsink, a network camera's SDK) through a ``FrameSourceFactory``
/// given to ``CaptureDevice/init(uniqueID:localizedName:deviceType:modelID:formats:duration:source:)``.
public protocol FrameSource: AnyObject {
    var configuration: SourceConfiguration { get }
    /// Real-time sources (cameras, paced files) never wait for the consumer: late frames drop.
    /// Others are read one frame ahead of the consumer (``next()`` is called while it is still at
    /// work on the last frame), which is handed the frame once ready; they drop nothing but
    /// corrupt ones.
    var isRealTime: Bool { get }
    func start() throws(CaptureError)
    /// The next frame, drop or notice; ``SourceEvent/idle`` after a short wait with nothing
    /// (so that the session can stop the source); ``SourceEvent/endOfStream`` at the end. A
    /// thrown error ends capture: ``CaptureError/deviceLost(path:)`` as an interruption, any
    /// other as a runtime error.
    func next() throws(CaptureError) -> SourceEvent
    func stop()
    /// Buffers held by consumers right now and at most (for the stats module). Called once,
    /// after `start()`, by the thread that started the source; the closure it returns reads only
    /// thread-safe pools, so any thread may call it while the capture thread runs the source.
    func usageReporter() -> @Sendable () -> BufferPool.Usage
    /// What makes a blocking `next()` return soon, for the thread that stops the session (a
    /// network read); nil for sources whose `next()` never blocks for long. Called once, after
    /// `start()`.
    func interrupter() -> (@Sendable () -> Void)?
    /// Takes one still in `format` (a photo larger than the video), with the flash if `flash`,
    /// between two video frames; video goes on afterwards. Sources that must stop streaming to
    /// switch report the frames they missed as `photoCapture` drops from their next `next()`.
    func captureStill(format: CaptureDeviceFormat, flash: Bool) throws(CaptureError) -> SampleBuffer
}

extension FrameSource {
    public func interrupter() -> (@Sendable () -> Void)? { nil }
    public func captureStill(format: CaptureDeviceFormat, flash: Bool) throws(CaptureError) -> SampleBuffer {
        throw .configuration("this source takes photos at its own size only (\(configuration.format.size))")
    }
}

/// Makes a device's ``FrameSource`` each time a session starts with it (a session that is
/// reconfigured or restarted makes a new one).
public protocol FrameSourceFactory: Sendable {
    /// Whether frames come at the source's own pace, late ones dropped like a camera's (see
    /// ``CaptureDevice/isPaced``).
    var isRealTime: Bool { get }
    /// A source for `configuration`, not yet started.
    func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource
}

/// Sequence-number bookkeeping shared by every source: turns gaps into one drop per lost frame.
struct SequenceTracker {
    private(set) var last: UInt32?

    /// The number of frames lost between the previous sequence number and `sequence`,
    /// modulo 2^32 (a wrap from 0xffffffff to 0 is no loss).
    mutating func gap(before sequence: UInt32) -> Int {
        defer { last = sequence }
        guard let last else { return 0 }
        let delta = sequence &- last
        // A delta of 0 or one that runs backwards (> 2^31) is a driver restart, not a loss.
        if delta == 0 || delta > UInt32.max / 2 { return 0 }
        return Int(delta - 1)
    }
}
