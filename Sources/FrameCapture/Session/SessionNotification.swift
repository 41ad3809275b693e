/// What a session tells its observers (AVCaptureSession's notifications).
public enum SessionNotification: Sendable {
    /// Capture failed while running (the session has stopped). Carries the error.
    case runtimeError(CaptureError)
    /// Capture was interrupted: the session has stopped, except for `.streamDisconnected`
    /// (a network stream dropped; the session reconnects and posts ``interruptionEnded`` when
    /// it is back, or `runtimeError(.streamUnavailable)` when it gives up).
    case wasInterrupted(InterruptionReason)
    /// A session that was interrupted is capturing again.
    case interruptionEnded
    case didStartRunning
    case didStopRunning
    /// A running session was reconfigured (its input swapped, its preset or outputs changed):
    /// capture went on — no stop or start is posted, sequence numbers continue — and the
    /// input's `activeFormat` may differ now.
    case inputsChanged
    /// A file source has delivered its last frame (the session has stopped).
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
