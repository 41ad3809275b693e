import FrameCapture
import FrameCore
import FrameImageIO
import FrameStats
import Synchronization

/// Feeds a ``PreviewServer`` from a `VideoDataOutput`: each delivered frame (annotated by the
/// output's processors, if it has an annotation stage) is encoded as JPEG and published, and the
/// figures behind `/stats.json` are kept current.
public final class PreviewFeed: VideoDataOutputSampleBufferDelegate {
    public let server: PreviewServer
    public let stats = StatsRecorder()
    private let quality: Int
    private let encoder = Mutex<JPEG.Encoder?>(nil)
    private let faces = Atomic<Int>(0)
    private let lastPublished = Mutex(Timestamp(nanoseconds: 0))
    private let poolPeak = Mutex<(@Sendable () -> Int?)?>(nil)

    /// - Parameters:
    ///   - server: where the frames and the figures are published.
    ///   - quality: JPEG quality, 1…100.
    ///   - fixesAllocatorThreshold: fix glibc's mmap threshold at 64 KiB for the process, unless
    ///     `MALLOC_MMAP_THRESHOLD_` sets one (a feed's per-frame JPEGs fragmented glibc's heap
    ///     under its default, adaptive threshold: the preview grew ~12 MB a minute with no
    ///     client; flat over an hour with it fixed). Process-wide; false leaves the allocator
    ///     as the program set it.
    public init(server: PreviewServer, quality: Int = 75, fixesAllocatorThreshold: Bool = true) {
        self.server = server
        self.quality = quality
        if fixesAllocatorThreshold { GlibcMalloc.fixMmapThreshold() }
    }

    public func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        stats.recordResult(of: frame)
        faces.store(frame.faces.count, ordering: .relaxed)
        let jpeg: [UInt8]? = encoder.withLock { box in
            if box == nil { box = try? JPEG.Encoder() }
            return try? box?.encode(frame.pixelBuffer, quality: quality)
        }
        if let jpeg { server.publish(jpeg: jpeg) }
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

    /// Where `/stats.json`'s `pool_peak_bytes` comes from: the session's buffer pool
    /// (`{ session.bufferUsage?.peakBytesInUse }`); without it the field is 0.
    public func reportPoolPeak(_ peak: @escaping @Sendable () -> Int?) { poolPeak.withLock { $0 = peak } }

    func publishStats(_ output: VideoDataOutput) {
        let peak = poolPeak.withLock { $0 }?()
        let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: output.counts, poolPeakBytes: peak)
        server.publish(statsJSON: StatsJSON.live(s, faces: faces.load(ordering: .relaxed), clients: server.connectedClients).text)
    }
}
