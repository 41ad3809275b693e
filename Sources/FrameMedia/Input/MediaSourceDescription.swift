import Foundation
import FrameCapture
import FrameCore
import Synchronization

/// A video file (MP4, MKV, WebM, MOV, AVI…) or a network stream (rtsp://, tcp://, udp://,
/// http(s)://, srt://…) read through libavformat and libavcodec, probed when the device is made:
/// an unreadable input is an error naming it before any session starts.
struct MediaSourceDescription: Sendable {
    /// A path, or a URL's absolute string.
    let location: String
    /// A network stream: real time, late frames dropped like a camera's, reconnected when it drops.
    let isLive: Bool
    /// A live source that, ending cleanly and beginning again with its first frame, is a
    /// recording served again (`Replay`): http(s) and tcp.
    var judgesReplays: Bool {
        guard isLive, let colon = location.firstIndex(of: ":") else { return false }
        return ["http", "https", "tcp"].contains(location[..<colon].lowercased())
    }
    /// Paced at the media's timestamps (always for a live stream).
    let realTime: Bool
    let info: MediaInput.Info
    /// The size frames are delivered at: the stream's, cut to even numbers (Y'CbCr pairs).
    let size: FrameSize
    let frameRate: Double
    let reconnect: CaptureDevice.ReconnectPolicy
    /// Where reading starts on the media timeline (files; seconds).
    let start: Double
    /// The input opened to probe, kept for the first start: a server that takes one
    /// connection (`ffmpeg … -f mpegts tcp://…?listen=1`) would refuse a second.
    let probed: ProbedInput

    final class ProbedInput: Sendable {
        private let input: Mutex<MediaInput?>
        init(_ input: MediaInput) { self.input = Mutex(input) }
        /// The probed input, once; nil afterwards (later starts open their own).
        func take() -> MediaInput? {
            input.withLock { i in
                defer { i = nil }
                return i
            }
        }
    }

    /// Decoder threads. Files: up to 4 (the cores FrameKit's detection does not need at 2; more
    /// than 4 gains little at 1080p and frame threading adds a frame of latency per thread).
    /// Live streams: 1, for the lowest latency — a live frame waits for no other.
    var decoderThreads: Int { Self.decoderThreads(isLive: isLive) }
    static func decoderThreads(isLive: Bool) -> Int { isLive ? 1 : min(4, CPUAllowance.current.count) }

    /// How long one open or read may block: a live stream silent this long has dropped.
    var timeout: Double { isLive ? 10 : 30 }

    var deviceFormat: CaptureDeviceFormat {
        CaptureDeviceFormat(
            fourCC: String(info.codec.uppercased().prefix(4)), pixelFormat: info.pixelFormat, isCompressed: false, size: size,
            frameRates: [frameRate])
    }

    init(
        location: String, isLive: Bool, realTime: Bool, frameRate: Double?,
        reconnect: CaptureDevice.ReconnectPolicy, start: Double = 0
    ) throws(CaptureError) {
        self.location = location
        self.isLive = isLive
        self.realTime = realTime || isLive
        self.reconnect = reconnect
        self.start = start
        let probe: MediaInput
        do {
            probe = try MediaInput(
                location, threads: Self.decoderThreads(isLive: isLive), timeout: isLive ? 10 : 30, isLive: isLive)
        } catch {
            switch error {
            case .interrupted(let reason), .failed(let reason):
                // FFmpeg says "Invalid data" of an empty file: say what it is.
                let empty = !isLive && (try? FileManager.default.attributesOfItem(atPath: location)[.size] as? Int) == 0
                throw Self.failure(at: location, isLive: isLive, reason: empty ? "the file is empty" : reason)
            case .rejected(let reason):
                // The stream answered with something unusable: a data error (exit 65), not an
                // unreachable stream that a retry may mend (75).
                throw Self.failure(at: location, isLive: isLive, rejected: true, reason: reason)
            }
        }
        info = probe.info
        probed = ProbedInput(probe)
        size = FrameSize(width: info.size.width & ~1, height: info.size.height & ~1)
        // A forged or absurd header (a GIF claiming 11822x11822) is refused here, naming the
        // input, before any buffer of that size is made.
        guard size.width >= 2, size.height >= 2, size.width * size.height <= PixelBuffer.pixelBudget else {
            let reason =
                "its video is \(info.size.width)x\(info.size.height): "
                + (size.width < 2 || size.height < 2 ? "too small" : "over the pixel budget (PixelBuffer.pixelBudget)")
            throw Self.failure(at: location, isLive: isLive, rejected: true, reason: reason)
        }
        self.frameRate = frameRate ?? (info.frameRate > 0 && info.frameRate <= 1000 ? info.frameRate : 30)
    }
}

extension MediaSourceDescription {
    /// The error for `reason` at `location`, its address redacted (``redactingCredentials(_:)``)
    /// whatever the kind: an http(s) response with a length is read as a file, and a file's
    /// error quotes its URL and FFmpeg's reason, which may quote it too. `rejected`: the input
    /// answered with something unusable (a data error, exit 65), not a stream gone (75).
    static func failure(at location: String, isLive: Bool, rejected: Bool = false, reason: String) -> CaptureError {
        let (shown, why) = (redactingCredentials(location), redactingCredentials(reason))
        guard isLive else { return .unreadableFile(path: shown, reason: why) }
        return rejected ? .streamRejected(url: shown, reason: why) : .streamUnavailable(url: shown, reason: why)
    }

    /// ``failure(at:isLive:rejected:reason:)`` at this input.
    func failure(_ reason: String, rejected: Bool = false) -> CaptureError {
        Self.failure(at: location, isLive: isLive, rejected: rejected, reason: reason)
    }
}

extension MediaSourceDescription: FrameSourceFactory {
    var isRealTime: Bool { realTime }
    func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
        try MediaSource(description: self, configuration: configuration)
    }
}
