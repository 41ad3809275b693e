/// What a session tells its observers (AVCaptureSession's notifications).
public enum SessionNotification: Sendable {
    /// Capture failed while running (the session has stopped). Carries the error.
    case runtimeError(CaptureError)
    /// Capture was interrupted (the session has stopped).
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

    public enum InterruptionReason: String, Sendable {
        /// The device went away (unplugged, driver unbound).
        case videoDeviceNotAvailable
        /// Another program holds the device.
        case videoDeviceInUseByAnotherClient
    }
}
