import FrameCore
import FrameImageIO

/// Errors from devices, sessions and sources. Each says what happened and, where there is
/// one, what to do about it.
///
/// FrameKit adds cases as it grows (a new source, a new output): switch over it with a
/// `default:` (or `@unknown default:`) for the cases you do not handle one by one, or match the
/// ones you care about with `catch CaptureError.deviceLost` and the like, so that a new release
/// does not stop your `switch` compiling.
public enum CaptureError: Error, Sendable, CustomStringConvertible {
    /// A system call on a device failed (errno and the call's name inside).
    case systemCall(path: String, SystemCallError)
    /// The path exists but is not a V4L2 video-capture node with streaming I/O.
    case notACaptureDevice(path: String, reason: String)
    /// The device node cannot be opened by this user.
    case permissionDenied(path: String)
    /// The device went away (unplugged, driver unbound).
    case deviceLost(path: String)
    case deviceBusy(path: String)
    /// The preset has no matching size on the device; the message lists what it offers.
    case unsupportedPreset(SessionPreset, device: String, available: [String])
    case unsupportedFrameRate(Double, device: String, available: [Double])
    case formatRejected(String)
    /// A file source's header cannot be read.
    case unreadableFile(path: String, reason: String)
    /// A network stream cannot be opened, or could not be reconnected.
    case streamUnavailable(url: String, reason: String)
    /// A network stream answered, and what it sends cannot be used (a picture over
    /// `PixelBuffer.pixelBudget`): reconnecting will not mend it.
    case streamRejected(url: String, reason: String)
    /// A file an output writes cannot be created or written (a recording's folder is missing,
    /// the disk is full); the reason says which.
    case cannotWrite(path: String, reason: String)
    /// A call or setting the session's current configuration does not allow (a misuse).
    case configuration(String)
    case noInput
    /// A photo was asked of a session that is not running (AVError.sessionNotRunning).
    case sessionNotRunning
    /// The session stopped before a photo was taken or while a recording ran.
    case sessionStopped
    /// A ``PhotoSettings`` used a second time; make new ones with `PhotoSettings(from:)`.
    case photoSettingsReused(uniqueID: Int64)
    /// `startRecording` while a recording is under way.
    case recordingInProgress
    /// Another task already iterates this output's `sampleBuffers`.
    case asyncConsumerExists
    /// A recording's limits (AVError.maximumDurationReached, maximumFileSizeReached,
    /// diskFull): the recording ended, its file is complete.
    case maximumDurationReached(seconds: Double)
    case maximumFileSizeReached(bytes: Int)
    /// `MovieFileOutput.maxRecordedFrameCount` frames written (FrameKit's own limit; FrameMedia).
    case maximumFrameCountReached(frames: Int)
    case freeDiskSpaceBelowLimit(bytes: Int)
    /// The session's frames changed (size) while recording (AVError.sessionConfigurationChanged):
    /// the recording ended, its file complete with the frames before the change.
    case sessionConfigurationChanged(String)
    /// libjpeg-turbo could not encode a frame.
    case encodingFailed(String)
    case pixelBuffer(PixelBufferError)
    /// A value or call the API does not accept (a JPEG quality of 0, a frame duration of 0):
    /// refused with this error, never a trap.
    case invalidArgument(String)
    /// The device has no control by that name; `available` lists the ones it has.
    case unknownControl(String, device: String, available: [String])
    /// A control value refused before or by the driver: out of range, off its step, not a menu
    /// item, read-only, or grabbed by a running stream.
    case controlRejected(control: String, reason: String)
    /// A device setting changed without ``CaptureDevice/lockForConfiguration()`` first.
    case notLockedForConfiguration(device: String)
    /// ``CaptureDevice/lockForConfiguration()`` while another owner (this process or another)
    /// holds the lock.
    case lockedForConfiguration(device: String)
    /// An exposure, focus, white-balance or flash mode the device does not have (as
    /// AVFoundation refuses one that `isExposureModeSupported` and friends deny).
    case unsupportedMode(String, device: String)
    /// A photo in another format than the video's needs the driver's buffers back, and a
    /// consumer kept `count` of them past the wait (`seconds`): copy a frame you keep.
    case buffersHeld(device: String, count: Int, seconds: Double)
    /// The device switched to the photo's format but sent no frame within `seconds`.
    case noStillFrame(device: String, size: FrameSize, seconds: Double)

    public var description: String {
        switch self {
        case .systemCall(let path, let error): "\(path): \(error)"
        case .notACaptureDevice(let path, let reason): "\(path) is not a video capture device: \(reason)"
        case .permissionDenied(let path):
            "permission denied opening \(path): add your user to the 'video' group (sudo usermod -aG video $USER) and log in again"
        case .deviceLost(let path): "\(path) went away (unplugged or driver unbound)"
        case .deviceBusy(let path): "\(path) is in use by another program"
        case .unsupportedPreset(let preset, let device, let available):
            "\(device) has no size for preset \(preset.rawValue); it offers \(available.joined(separator: ", "))"
        case .unsupportedFrameRate(let fps, let device, let available):
            "\(device) cannot run at \(fps) fps at this size; it offers \(available.map { String($0) }.joined(separator: ", "))"
        case .formatRejected(let message): "the device rejected the format: \(message)"
        case .unreadableFile(let path, let reason): "cannot read \(path): \(reason)"
        case .streamUnavailable(let url, let reason): "stream \(url) is unavailable: \(reason)"
        case .streamRejected(let url, let reason): "stream \(url) cannot be used: \(reason)"
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .configuration(let message): message
        case .noInput: "the session has no input"
        case .sessionNotRunning: "the session is not running"
        case .sessionStopped: "the session stopped before this was done"
        case .photoSettingsReused(let id): "photo settings \(id) were used before; make new ones with PhotoSettings(from:)"
        case .recordingInProgress: "a recording is already under way"
        case .asyncConsumerExists: "another task already iterates this output's sampleBuffers; use one consumer per output"
        case .sessionConfigurationChanged(let what): "the session's configuration changed: \(what); the recording ended"
        case .maximumDurationReached(let seconds): "maximum recorded duration (\(seconds) s) reached"
        case .maximumFileSizeReached(let bytes): "maximum recorded file size (\(bytes) bytes) reached"
        case .maximumFrameCountReached(let frames): "maximum recorded frame count (\(frames)) reached"
        case .freeDiskSpaceBelowLimit(let bytes): "free disk space below the limit (\(bytes) bytes)"
        case .encodingFailed(let message): "JPEG encoding failed: \(message)"
        case .pixelBuffer(let error): error.description
        case .invalidArgument(let message): message
        case .unknownControl(let name, let device, let available):
            "\(device) has no control '\(name)'; it has: \(available.isEmpty ? "none" : available.joined(separator: ", "))"
        case .controlRejected(let control, let reason): "cannot set \(control): \(reason)"
        case .notLockedForConfiguration(let device):
            "\(device) is not locked for configuration: call lockForConfiguration() before changing its settings"
        case .lockedForConfiguration(let device): "\(device) is locked for configuration by another owner"
        case .unsupportedMode(let mode, let device): "\(device) does not support \(mode)"
        case .buffersHeld(let device, let count, let seconds):
            "a consumer still holds \(count) of \(device)'s buffers after \(seconds) s: the photo's format switch needs them back (copy a frame you keep)"
        case .noStillFrame(let device, let size, let seconds): "\(device) sent no frame at \(size) within \(seconds) s for the photo"
        }
    }
}
