import FrameCapture
import FrameCore
import FrameImageIO
import FrameMedia
import FramePixels
import FrameStats
import Synchronization

/// Feeds a ``PreviewServer`` from a `VideoDataOutput`: each delivered frame (annotated by the
/// output's processors, if it has an annotation stage: the boxes are in the pictures, so on
/// the frames they belong to) is encoded once for each kind of stream someone watches — H.264
/// (one encoder for every viewer) and JPEG — and published, and the figures behind
/// `/stats.json` are kept current.
public final class PreviewFeed: VideoDataOutputSampleBufferDelegate {
    public let server: PreviewServer
    public let stats = StatsRecorder()
    private let quality: Int
    private let videoBitrate: Int?
    private let drawsFaces: Bool
    private let video = Mutex(VideoEncoding())
    private let encoder = Mutex<JPEG.Encoder?>(nil)
    private let faces = Atomic<Int>(0)
    private let lastPublished = Mutex(Timestamp(nanoseconds: 0))
    private let poolPeak = Mutex<(@Sendable () -> Int?)?>(nil)

    /// - Parameters:
    ///   - server: where the frames and the figures are published.
    ///   - quality: JPEG quality, 1…100.
    ///   - videoBitrate: the H.264 stream's cap in bits a second (nil: ``defaultVideoBitrate(for:)``).
    ///   - drawsFaces: box each frame's faces: drawn into the MJPEG pictures, and for the H.264
    ///     stream sent beside it (`/faces.ndjson`, `/faces.json`) for the page to draw over the frame shown —
    ///     the video itself left clean. False for a program that draws them into the frames
    ///     itself (an `AnnotationStage` in the output's chain).
    ///   - fixesAllocatorThreshold: fix glibc's mmap threshold at 64 KiB for the process, unless
    ///     `MALLOC_MMAP_THRESHOLD_` sets one (a feed's per-frame JPEGs fragmented glibc's heap
    ///     under its default, adaptive threshold: the preview grew ~12 MB a minute with no
    ///     client; flat over an hour with it fixed). Process-wide; false leaves the allocator
    ///     as the program set it.
    public init(
        server: PreviewServer, quality: Int = 75, videoBitrate: Int? = nil, drawsFaces: Bool = true, fixesAllocatorThreshold: Bool = true
    ) {
        self.server = server
        self.quality = quality
        self.videoBitrate = videoBitrate
        self.drawsFaces = drawsFaces
        if fixesAllocatorThreshold { GlibcMalloc.fixMmapThreshold() }
    }

    public func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        stats.recordResult(of: frame)
        faces.store(frame.faces.count, ordering: .relaxed)
        if server.hasVideoViewers { encodeVideo(frame) }
        if server.hasMJPEGViewers {
            var picture = frame.pixelBuffer
            if drawsFaces { Annotation.drawBoxes(frame.faces.map(\.bounds), on: &picture) }
            let jpeg: [UInt8]? = encoder.withLock { box in
                if box == nil { box = try? JPEG.Encoder() }
                return try? box?.encode(picture, quality: quality)
            }
            if let jpeg { server.publish(jpeg: jpeg) }
        }
        // The stats are re-rendered at most twice a second.
        let now = Timestamp.now()
        let due = lastPublished.withLock { last -> Bool in
            guard now.seconds(since: last) >= 0.5 else { return false }
            last = now
            return true
        }
        if due { publishStats(output) }
    }

    public func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
        stats.recordDrop(frame)
    }

    /// The H.264 stream's default cap: 0.07 bits a pixel a frame at 30 frames a second (720p:
    /// 1.9 Mbit/s; 480p: 0.65), with a floor of 200 kbit/s.
    public static func defaultVideoBitrate(for size: FrameSize) -> Int {
        max(200_000, Int(Double(size.width * size.height) * 30 * 0.07))
    }

    /// The encoder of the H.264 stream, made for the frames' size (again when it changes).
    private struct VideoEncoding {
        var encoder: LiveVideoEncoder?
        /// A size the encoder refused: not tried again frame after frame.
        var refused: FrameSize?
    }

    private func encodeVideo(_ frame: SampleBuffer) {
        let size = FrameSize(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
        video.withLock { v in
            if v.encoder?.size != size && v.refused != size {
                v.encoder = nil
                do {
                    let encoder = try LiveVideoEncoder(
                        size: size, frameRate: 30, bitrate: videoBitrate ?? Self.defaultVideoBitrate(for: size))
                    server.publish(videoHeader: encoder.initSegment, codec: encoder.codec)
                    v.encoder = encoder
                } catch {
                    v.refused = size
                }
            }
            guard let encoder = v.encoder else { return }
            let key = server.takeKeyFrameRequest()
            if let fragment = try? encoder.encode(frame.pixelBuffer, forceKey: key) {
                // The faces first: the page has them by the time it shows the frame.
                server.publish(
                    videoFaces: drawsFaces ? frame.faces.map(\.bounds) : [], at: fragment.time,
                    capture: UInt32(truncatingIfNeeded: frame.captureInstant.wallClockMilliseconds))
                server.publish(videoFragment: fragment.bytes, isKey: fragment.isKey)
            }
        }
    }

    /// Where `/stats.json`'s `pool_peak_bytes` comes from: the session's buffer pool
    /// (`{ session.bufferUsage?.peakBytesInUse }`); without it the field is 0.
    public func reportPoolPeak(_ peak: @escaping @Sendable () -> Int?) { poolPeak.withLock { $0 = peak } }

    func publishStats(_ output: VideoDataOutput) {
        let peak = poolPeak.withLock { $0 }?()
        let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: output.counts, poolPeakBytes: peak)
        var json = StatsJSON.live(s, faces: faces.load(ordering: .relaxed), clients: server.connectedClients)
        if case .object(let fields) = json {
            let viewers = server.viewers.map { v in
                JSON.object([
                    ("id", .int(v.id)), ("stream", .string(v.stream.rawValue)), ("seconds", .number(v.seconds, decimals: 1)),
                    ("bytes_sent", .int(v.bytesSent)), ("bytes_per_s", .number(v.bytesPerSecond, decimals: 0)),
                    ("skipped_frames", .int(v.skippedFrames))
                ])
            }
            json = .object(fields + [("viewers", .array(viewers))])
        }
        server.publish(statsJSON: json.text)
    }
}
