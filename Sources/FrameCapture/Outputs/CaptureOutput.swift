import Dispatch
import FrameCore

/// Something a ``CaptureSession`` delivers frames to (as AVCaptureOutput): ``VideoDataOutput``,
/// ``PhotoOutput`` and FrameMedia's `MovieFileOutput`.
///
/// Closed to conformance outside FrameKit: its one requirement is a value only FrameKit's outputs
/// can make, so every output a session is given is one it can drive (checked when the program is
/// compiled, not refused when it runs). An output of your own is a ``VideoDataOutput`` and its
/// delegate — `MovieFileOutput` is built that way.
public protocol CaptureOutput: AnyObject, Sendable {
    /// How a session drives this output (FrameKit's own; nothing to call).
    var sessionEndpoint: CaptureOutputEndpoint { get }
}

/// What a session drives behind a ``CaptureOutput``: made by FrameKit's outputs only.
public struct CaptureOutputEndpoint: Sendable {
    package let sink: any FrameSink
    package init(_ sink: any FrameSink) { self.sink = sink }
}

/// What the session needs of an output: FrameKit's own outputs conform (FrameMedia's movie
/// output among them: `package`, not public, so that no output outside FrameKit claims to).
package protocol FrameSink: CaptureOutput {
    /// Throws if the output cannot deliver frames of `nativeFormat` as configured (checked
    /// before capture starts, so a bad configuration is refused at commit, not frame by frame).
    func validate(nativeFormat: PixelFormat) throws(CaptureError)
    func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double)
    /// Where the output posts the session's notifications while this run lasts.
    func attach(notices: @escaping @Sendable (SessionNotification) -> Void)
    func receive(_ frame: SampleBuffer)
    func receive(drop: DroppedFrame)
    var isReadyForMoreFrames: Bool { get }
    var readiness: DispatchSemaphore { get }
    /// The session stopped: the output takes no more frames from this run (called under the
    /// session's lock, never blocks); the flush it returns delivers what is queued (called with
    /// no session lock held).
    func finish() -> OutputFlush
    /// The format the output wants, if it has a preference (the first one's wins).
    var preferredPixelFormat: PixelFormat? { get }
}

extension FrameSink {
    package func validate(nativeFormat: PixelFormat) throws(CaptureError) {}
    package func attach(notices: @escaping @Sendable (SessionNotification) -> Void) {}
}

extension VideoDataOutput {
    package var preferredPixelFormat: PixelFormat? { videoSettings.pixelFormat }
}
