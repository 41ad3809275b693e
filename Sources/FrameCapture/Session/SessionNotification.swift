/// What a session tells its observers (AVCaptureSession's notifications).
public enum SessionNotification: Sendable {
    /// Capture failed while running (the session has stopped). Carries the error.
    case runtimeError(CaptureError)
    /// A processor of a ``VideoDataOutput`` threw: capture goes on, and the frame is a
    /// `processingFailed` drop carrying what was thrown (`DroppedFrame.failure`). Posted for
    /// the first frame of a run of failures, and again only after a frame that did not fail:
    /// a model that breaks for good says so once, not thirty times a second.
    case processingFailed(DroppedFrame)
    /// Capture was interrupted: the session has stopped, except for `.streamDisconnected`
    /// (a network stream dropped; the session reconnects and posts ``interruptionEnded`` when
    /// it is back, `runtimeError(.streamUnavailable)` when it gives up, or ``sourceEnded`` when
    /// the stream, reopened, turned out to be a recording served again from its start).
    case wasInterrupted(InterruptionReason)
    /// A session that was interrupted is capturing again.
    case interruptionEnded
    case didStartRunning
    case didStopRunning
    /// A running session was reconfigured (its input swapped, its preset or outputs changed):
    /// capture went on — no stop or start is posted, sequence numbers continue — and the
    /// input's `activeFormat` may differ now.
    case inputsChanged
    /// A file source has delivered its last frame, or a stream that ended was found to be a
    /// recording served again (the session has stopped).
    case sourceEnded
    /// A control of the running device changed — set through FrameKit, by another program
    /// (v4l2-ctl), or by the driver itself (V4L2_EVENT_CTRL); capture goes on.
    case deviceControlChanged(DeviceControl.Change)

    public enum InterruptionReason: String, Sendable {
        /// The device went away (unplugged, driver unbound).
        case videoDeviceNotAvailable
        /// Another program holds the device.
        case videoDeviceInUseByAnotherClient
        /// A network stream dropped (connection lost, stream ended, silent past the timeout).
        case streamDisconnected
    }
}
