import Foundation
import FrameCapture

// Files and streams as capture devices: libavformat and libavcodec for video files and network
// streams, FrameCapture's own readers for Y4M, MJPEG and images.
extension CaptureDevice {
    /// How a network stream that drops is reconnected: `attempts` tries, waiting `initialDelay`
    /// seconds before the first and doubling up to `maxDelay`.
    public struct ReconnectPolicy: Sendable, Equatable {
        public var attempts: Int
        public var initialDelay: Double
        public var maxDelay: Double
        public init(attempts: Int = 5, initialDelay: Double = 0.5, maxDelay: Double = 8) {
            self.attempts = max(0, attempts)
            self.initialDelay = max(0.01, initialDelay)
            self.maxDelay = max(self.initialDelay, maxDelay)
        }
    }

    /// A file source: a video file (MP4, MKV, WebM, MOV, AVI… through libavformat and
    /// libavcodec: H.264, H.265, VP9, AV1, MPEG-4…), a Y4M or MJPEG file, a JPEG/PNG/PGM/PPM
    /// image, or a folder of images (each a frame of its own size). A URL that is not a file URL is opened as ``stream(_:reconnect:)``.
    /// Throws if the file cannot be read or holds no video.
    /// - Parameters:
    ///   - url: the file, or a folder of images (read in name order).
    ///   - realTime: pace frames at the file's frame rate and drop late ones like a camera;
    ///     otherwise every frame is delivered as fast as the consumer takes it (a consumer
    ///     that keeps every buffer gets `outOfBuffers` drops after a second's wait).
    ///   - frameRate: the rate to assume where the file has none (images, MJPEG) or to use
    ///     instead of the file's own; nil: the file's rate, else 30.
    ///   - start: where to start on the media timeline, in seconds (video files read through
    ///     libavformat: the seek lands on the key frame before, the frames up to `start` are
    ///     skipped); other files refuse it with `CaptureError.invalidArgument`.
    public static func file(_ url: URL, realTime: Bool = false, frameRate: Double? = nil, start: Double = 0) throws(CaptureError)
        -> CaptureDevice
    {
        guard url.isFileURL else { return try stream(url) }
        guard start >= 0, start.isFinite else { throw .invalidArgument("a start time must be 0 or more seconds, got \(start)") }
        let device: CaptureDevice
        do { device = try CaptureDevice.ownFile(url, realTime: realTime, frameRate: frameRate) } catch {
            // Content FrameKit's own readers do not know: a video file for libavformat.
            guard case .unreadableFile(_, CaptureDevice.notOurFile) = error else { throw error }
            let media = try MediaSourceDescription(
                location: url.path, isLive: false, realTime: realTime, frameRate: frameRate, reconnect: ReconnectPolicy(attempts: 0),
                start: start)
            return CaptureDevice(
                uniqueID: "file:\(url.path)", localizedName: url.lastPathComponent, deviceType: .file,
                modelID: media.info.codec, formats: [media.deviceFormat], duration: media.info.duration, source: media)
        }
        guard start == 0 else {
            throw .invalidArgument("\(url.lastPathComponent): a start time applies to video files (MP4, MKV…), not Y4M, MJPEG or images")
        }
        return device
    }

    /// A live network stream — rtsp://, rtsps://, tcp://, udp://, http(s)://, srt:// where the
    /// linked libavformat has the protocol (another scheme is `CaptureError.invalidArgument`)
    /// — probed now (a stream that cannot be opened is `CaptureError.streamUnavailable`). Frames come at the stream's pace and
    /// late ones drop like a camera's; a stream that drops is reconnected as `reconnect` says.
    /// An http(s):// or file:// URL to a recording (its container gives a duration, or the
    /// response its length) is a file instead (`.file`): read as fast as it is consumed, and
    /// it ends.
    public static func stream(_ url: URL, reconnect: ReconnectPolicy = ReconnectPolicy()) throws(CaptureError) -> CaptureDevice {
        let scheme = url.scheme?.lowercased() ?? ""
        guard !scheme.isEmpty, MediaInput.hasProtocol(scheme) else {
            throw .invalidArgument("\(redactingCredentials(url.absoluteString)): this libavformat has no '\(scheme)' protocol")
        }
        let media = try MediaSourceDescription(
            location: url.absoluteString, isLive: true, realTime: true, frameRate: nil, reconnect: reconnect)
        // What is shown (names, labels, summaries) never carries the stream's password.
        let shown = redactingCredentials(url.absoluteString)
        // A file behind a URL (http(s) or file:// to a recording: its container gives a
        // duration, or the response its length — a .ts, .mjpeg or raw .h264 has no duration)
        // is a file: it ends, and is neither reconnected nor replayed for ever. Live is what
        // says neither (an IP camera's MJPEG, live HLS, RTSP, TCP).
        if ["http", "https", "file"].contains(scheme), media.info.duration > 0 || media.info.byteSize != nil {
            let file = try MediaSourceDescription(
                location: url.absoluteString, isLive: false, realTime: false, frameRate: nil, reconnect: ReconnectPolicy(attempts: 0))
            return CaptureDevice(
                uniqueID: shown, localizedName: shown, deviceType: .file, modelID: file.info.codec, formats: [file.deviceFormat],
                duration: file.info.duration, source: file)
        }
        return CaptureDevice(
            uniqueID: shown, localizedName: shown, deviceType: .stream, modelID: media.info.codec,
            formats: [media.deviceFormat], source: media)
    }

}

extension CaptureDeviceInput {
    /// An input from a URL (AVURLAsset's habit): a file URL is `CaptureDevice.file(_:realTime:frameRate:start:)`,
    /// any other a live `CaptureDevice.stream(_:reconnect:)`.
    public convenience init(url: URL, realTime: Bool = false) throws(CaptureError) {
        try self.init(device: url.isFileURL ? .file(url, realTime: realTime) : .stream(url))
    }
}

extension DiscoverySession {
    /// As FrameCapture's `init(deviceTypes:mediaType:position:)`, listing `streams` too (probed
    /// when `devices` is read) as `.stream` devices when `deviceTypes` has `.stream`; one that
    /// cannot be opened is in `problems`.
    public init(
        deviceTypes: [CaptureDevice.DeviceType] = [.external, .virtual, .stream], mediaType: CaptureDevice.MediaType = .video,
        position: CaptureDevice.Position = .unspecified, streams: [URL]
    ) {
        self.init(
            deviceTypes: deviceTypes, mediaType: mediaType, position: position, kernel: SystemV4L2Kernel(), streams: streams,
            openStream: { url throws(CaptureError) in try CaptureDevice.stream(url, reconnect: .init(attempts: 0)) })
    }
}
