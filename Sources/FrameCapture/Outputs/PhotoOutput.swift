import Dispatch
import FrameCore
import FrameImageIO
import Synchronization

/// How to take one photo (as AVCapturePhotoSettings). A settings object may be used once:
/// make another with ``init(from:)``.
public struct PhotoSettings: Sendable, Equatable {
    /// Unique among all settings made in this process.
    public let uniqueID: Int64
    /// JPEG quality, 1…100.
    public private(set) var quality: Int

    private static let counter = Atomic<Int64>(0)

    /// Settings with JPEG quality 92.
    public init() { self.init(checked: 92) }

    /// Settings with JPEG quality `quality`; outside 1…100 is ``CaptureError/invalidArgument(_:)``.
    public init(quality: Int) throws(CaptureError) {
        guard (1...100).contains(quality) else { throw .invalidArgument("JPEG quality must be 1…100, got \(quality)") }
        self.init(checked: quality)
    }

    /// A copy of `settings` with a fresh ``uniqueID``.
    public init(from settings: PhotoSettings) {
        self.init(checked: settings.quality)
    }

    private init(checked quality: Int) {
        uniqueID = Self.counter.add(1, ordering: .relaxed).newValue
        self.quality = quality
    }
}

/// A captured photo.
public struct Photo: Sendable {
    public let settings: PhotoSettings
    /// The frame the photo was taken from, in the source's format.
    public let pixelBuffer: PixelBuffer
    public let timestamp: Double
    private let jpeg: [UInt8]

    init(settings: PhotoSettings, pixelBuffer: PixelBuffer, timestamp: Double, jpeg: [UInt8]) {
        self.settings = settings
        self.pixelBuffer = pixelBuffer
        self.timestamp = timestamp
        self.jpeg = jpeg
    }

    /// The photo as a JPEG file's bytes (libjpeg-turbo, at the settings' quality).
    public func fileDataRepresentation() -> [UInt8] { jpeg }
}

/// Receives photos on the output's queue.
public protocol PhotoCaptureDelegate: AnyObject, Sendable {
    func photoOutput(_ output: PhotoOutput, didFinishProcessingPhoto photo: Photo?, error: CaptureError?)
}

/// Takes still photos from a running session (as AVCapturePhotoOutput); works beside a
/// ``VideoDataOutput`` on the same session. The next frame the source produces after a request
/// becomes the photo.
public final class PhotoOutput: CaptureOutput, FrameSink {
    private struct Request {
        let settings: PhotoSettings
        let delegate: any PhotoCaptureDelegate
    }
    private struct State {
        var pending: [Request] = []
        var usedIDs: Set<Int64> = []
        var running = false
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "framekit.photo-output", qos: .userInitiated)
    let readiness = DispatchSemaphore(value: 0)

    public init() {}

    /// Requests a photo. The delegate is called once, on the output's queue, with the photo or
    /// an error: a reused settings ``PhotoSettings/uniqueID``, a session that is not running
    /// (the settings may then be used again), or one that stops first.
    public func capturePhoto(with settings: PhotoSettings, delegate: any PhotoCaptureDelegate) {
        let problem: CaptureError? = state.withLock { s in
            // A request refused because the session is not running does not use up its settings.
            guard s.running else { return .sessionNotRunning }
            guard s.usedIDs.insert(settings.uniqueID).inserted else {
                return .photoSettingsReused(uniqueID: settings.uniqueID)
            }
            s.pending.append(Request(settings: settings, delegate: delegate))
            return nil
        }
        if let problem { queue.async { delegate.photoOutput(self, didFinishProcessingPhoto: nil, error: problem) } }
    }

    // MARK: FrameSink

    var preferredPixelFormat: PixelFormat? { nil }
    var isReadyForMoreFrames: Bool { true }

    func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) { state.withLock { $0.running = true } }

    func receive(_ frame: SampleBuffer) {
        let requests = state.withLock { s -> [Request] in
            defer { s.pending.removeAll() }
            return s.pending
        }
        guard !requests.isEmpty else { return }
        // Encode off the capture thread; the frame's buffer is held only while encoding.
        queue.async {
            for request in requests {
                do {
                    let jpeg = try JPEG.encode(frame.pixelBuffer, quality: request.settings.quality)
                    let photo = Photo(
                        settings: request.settings, pixelBuffer: frame.pixelBuffer.copy(),
                        timestamp: frame.presentationTime, jpeg: jpeg)
                    request.delegate.photoOutput(self, didFinishProcessingPhoto: photo, error: nil)
                } catch {
                    request.delegate.photoOutput(
                        self, didFinishProcessingPhoto: nil, error: .encodingFailed("\(error)"))
                }
            }
        }
    }

    func receive(drop: DroppedFrame) {}

    func finish() {
        let requests = state.withLock { s -> [Request] in
            s.running = false
            defer { s.pending.removeAll() }
            return s.pending
        }
        for request in requests {
            queue.async {
                request.delegate.photoOutput(
                    self, didFinishProcessingPhoto: nil, error: .sessionStopped)
            }
        }
        queue.sync {}
    }
}
