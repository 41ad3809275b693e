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
    /// The largest photo wanted (AVFoundation's `maxPhotoDimensions`): a size the device offers,
    /// at most the output's ``PhotoOutput/maxPhotoDimensions``. Larger than the video's size,
    /// the still is taken at it (V4L2: a brief switch to that format and back, its gap reported
    /// as `photoCapture` drops). nil: the video's own size.
    public var maxPhotoDimensions: FrameSize?
    /// The flash for this photo; `.on` needs a device whose ``CaptureDevice/supportedFlashModes``
    /// has it (an error otherwise, as in AVFoundation).
    public var flashMode: CaptureDevice.FlashMode = .off

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
        maxPhotoDimensions = settings.maxPhotoDimensions
        flashMode = settings.flashMode
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
/// becomes the photo — or, for settings asking for more than the video's size (or for the
/// flash), a still the capture thread takes at that size between two video frames.
public final class PhotoOutput: CaptureOutput, FrameSink {
    private struct Request {
        let settings: PhotoSettings
        let delegate: any PhotoCaptureDelegate
        /// Needs a still of its own (larger than the video, or with the flash).
        var needsStill: Bool { settings.maxPhotoDimensions != nil || settings.flashMode != .off }
    }
    private struct State {
        var pending: [Request] = []
        var usedIDs: Set<Int64> = []
        var running = false
        var maxPhotoDimensions: FrameSize?
        /// The video's size (from the frames seen): requests up to it take the next frame.
        var streamSize: FrameSize?
    }
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "framekit.photo-output", qos: .userInitiated)
    package let readiness = DispatchSemaphore(value: 0)

    public init() { DelegateQueue.mark(queue) }

    /// The largest photo this output takes (AVFoundation: set it before asking for it in
    /// ``PhotoSettings/maxPhotoDimensions``); nil: the video's size. Use one of the device's
    /// ``CaptureDevice/supportedMaxPhotoDimensions``.
    public var maxPhotoDimensions: FrameSize? {
        get { state.withLock { $0.maxPhotoDimensions } }
        set { state.withLock { $0.maxPhotoDimensions = newValue } }
    }

    /// Requests a photo. The delegate is called once, on the output's queue, with the photo or
    /// an error: a reused settings ``PhotoSettings/uniqueID``, a session that is not running
    /// (the settings may then be used again), or one that stops first.
    public func capturePhoto(with settings: PhotoSettings, delegate: any PhotoCaptureDelegate) {
        let problem: CaptureError? = state.withLock { s in
            // A request refused because the session is not running does not use up its settings.
            guard s.running else { return .sessionNotRunning }
            if let wanted = settings.maxPhotoDimensions {
                guard let ceiling = s.maxPhotoDimensions, wanted.width <= ceiling.width, wanted.height <= ceiling.height else {
                    return .invalidArgument(
                        "photo settings ask for \(wanted); set the output's maxPhotoDimensions to at least that first (now \(s.maxPhotoDimensions.map { "\($0)" } ?? "the video's size"))"
                    )
                }
            }
            guard s.usedIDs.insert(settings.uniqueID).inserted else {
                return .photoSettingsReused(uniqueID: settings.uniqueID)
            }
            s.pending.append(Request(settings: settings, delegate: delegate))
            return nil
        }
        if let problem { queue.async { delegate.photoOutput(self, didFinishProcessingPhoto: nil, error: problem) } }
    }

    // MARK: FrameSink

    package var preferredPixelFormat: PixelFormat? { nil }
    package var isReadyForMoreFrames: Bool { true }

    package func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) { state.withLock { $0.running = true } }

    package func receive(_ frame: SampleBuffer) {
        let requests = state.withLock { s -> [Request] in
            let size = FrameSize(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
            s.streamSize = size
            // A still is taken for requests that want more than this frame, or the flash.
            let served = s.pending.filter { r in !r.needsStill || (r.settings.flashMode == .off && Self.fits(r, in: size)) }
            s.pending.removeAll { r in served.contains { $0.settings.uniqueID == r.settings.uniqueID } }
            return served
        }
        deliver(frame, to: requests)
    }

    private static func fits(_ request: Request, in size: FrameSize) -> Bool {
        guard let wanted = request.settings.maxPhotoDimensions else { return true }
        return wanted.width <= size.width && wanted.height <= size.height
    }

    /// Whether a request needs a still of its own: the flash, or more than the video's size
    /// (known from the first frame on; until then, requests wait for that frame).
    private static func waitsForStill(_ r: Request, streamSize: FrameSize?) -> Bool {
        if r.settings.flashMode != .off { return true }
        guard let streamSize else { return false }
        return !fits(r, in: streamSize)
    }

    /// What the capture thread should take a still for: the largest size and the flash
    /// the waiting requests want (nil when none needs one).
    var pendingStill: (size: FrameSize?, flash: CaptureDevice.FlashMode)? {
        state.withLock { s in
            let waiting = s.pending.filter { Self.waitsForStill($0, streamSize: s.streamSize) }
            guard !waiting.isEmpty else { return nil }
            let sizes = waiting.compactMap(\.settings.maxPhotoDimensions)
            let size = sizes.max { $0.area < $1.area }
            return (size, waiting.contains { $0.settings.flashMode == .on } ? .on : .off)
        }
    }

    /// A still taken for the waiting requests, or why it could not be.
    func receiveStill(_ result: Result<SampleBuffer, CaptureError>) {
        let requests = state.withLock { s -> [Request] in
            let waiting = s.pending.filter { Self.waitsForStill($0, streamSize: s.streamSize) }
            s.pending.removeAll { r in waiting.contains { $0.settings.uniqueID == r.settings.uniqueID } }
            return waiting
        }
        switch result {
        case .success(let still): deliver(still, to: requests)
        case .failure(let error):
            for request in requests { queue.async { request.delegate.photoOutput(self, didFinishProcessingPhoto: nil, error: error) } }
        }
    }

    private func deliver(_ frame: SampleBuffer, to requests: [Request]) {
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

    package func receive(drop: DroppedFrame) {}

    package func finish() -> OutputFlush {
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
        return OutputFlush(after: queue)
    }
}

extension PhotoOutput {
    public var sessionEndpoint: CaptureOutputEndpoint { CaptureOutputEndpoint(self) }
}
