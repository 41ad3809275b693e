import FrameCore
import Synchronization

/// Collects the figures of one pipeline run: latency histograms (capture → delivery, each
/// stage, capture → result), frame rate and memory. Recording is O(1) and allocation-free in
/// the steady state; safe from any thread.
public final class StatsRecorder: Sendable {
    private struct State {
        var delivery = LatencyHistogram()
        var result = LatencyHistogram()
        var processing = LatencyHistogram()
        var stages: [String: LatencyHistogram] = [:]
        var stageOrder: [String] = []
        var firstResult: Timestamp?
        var lastResult: Timestamp?
        /// The last frame seen, delivered or dropped (what /healthz watches).
        var lastActivity: Timestamp?
        var results = 0
        /// Latency over time with drops marked, for the report's plot: at most
        /// ``timelineCapacity`` points, allocated once. When full, every other delivered frame's
        /// point is let go and from then on only every `resultStride`-th result is kept, so the
        /// plot spans the whole run at a fixed size. Drops are kept over results; when drops
        /// alone fill the plot, every other one goes too and `dropStride` doubles. Strides stop
        /// at 2^40 (35 years at 1,000 frames a second): a run of any length never overflows.
        var timeline: [TimelinePoint] = {
            var t: [TimelinePoint] = []
            t.reserveCapacity(StatsRecorder.timelineCapacity)
            return t
        }()
        var resultStride = 1
        var dropStride = 1
        var drops = 0

        mutating func addToTimeline(_ point: TimelinePoint) {
            let isDrop = point.dropReason != nil
            if isDrop {
                drops &+= 1
                guard drops % dropStride == 0 else { return }
            } else {
                guard results % resultStride == 0 else { return }
            }
            if timeline.count >= StatsRecorder.timelineCapacity {
                if resultStride < StatsRecorder.maximumTimelineStride { resultStride *= 2 }
                let old = timeline
                timeline.removeAll(keepingCapacity: true)
                for (i, p) in old.enumerated() where i % 2 == 0 || p.dropReason != nil { timeline.append(p) }
                if timeline.count >= StatsRecorder.timelineCapacity * 3 / 4 { // mostly drops: halve them too
                    if dropStride < StatsRecorder.maximumTimelineStride { dropStride *= 2 }
                    let kept = timeline
                    timeline.removeAll(keepingCapacity: true)
                    for (i, p) in kept.enumerated() where i % 2 == 0 { timeline.append(p) }
                }
            }
            timeline.append(point)
        }
        var peakRSS = 0
        var peakPoolBytes = 0
    }

    /// One frame on the latency-over-time plot.
    public struct TimelinePoint: Sendable, Equatable {
        public var sequence: UInt64
        public var latencyMilliseconds: Double?
        public var dropReason: DropReason?
    }

    public static let timelineCapacity = 4_096
    static let maximumTimelineStride = 1 << 40
    private let state = Mutex(State())

    public init() {}

    /// A frame's processing ended at `resultAt`. Capture → delivery is that latency less the
    /// frame's processing stages (which ran after delivery to the output's queue).
    public func recordResult(of frame: SampleBuffer, resultAt: Timestamp = .now()) {
        state.withLock { s in
            let latency = resultAt.seconds(since: frame.captureInstant)
            s.result.record(seconds: latency)
            var processing = 0.0
            for stage in frame.stageDurations {
                processing += stage.seconds
                if s.stages[stage.stage] == nil {
                    s.stages[stage.stage] = LatencyHistogram()
                    s.stageOrder.append(stage.stage)
                }
                s.stages[stage.stage]!.record(seconds: stage.seconds)
            }
            s.processing.record(seconds: processing)
            s.delivery.record(seconds: latency - processing)
            if s.firstResult == nil { s.firstResult = resultAt }
            s.lastResult = resultAt
            s.lastActivity = resultAt
            s.results &+= 1
            s.addToTimeline(TimelinePoint(sequence: frame.sequenceNumber, latencyMilliseconds: latency * 1000, dropReason: nil))
        }
    }

    public func recordDrop(_ drop: DroppedFrame) {
        state.withLock { s in
            s.lastActivity = .now()
            s.addToTimeline(TimelinePoint(sequence: drop.sequenceNumber, latencyMilliseconds: nil, dropReason: drop.reason))
        }
    }

    /// The distributions so far and when the last frame was seen, for the metrics endpoint.
    package typealias MetricsSample = (latency: LatencyHistogram, processing: LatencyHistogram, lastActivity: Timestamp?)
    package func metricsSample() -> MetricsSample {
        state.withLock { ($0.result, $0.processing, $0.lastActivity) }
    }

    /// Samples memory: process RSS and the source's pool bytes.
    public func sampleMemory(poolBytesInUse: Int?) {
        let rss = MemoryProbe.residentSet()
        state.withLock { s in
            if let rss { s.peakRSS = max(s.peakRSS, rss.peak, rss.current) }
            if let poolBytesInUse { s.peakPoolBytes = max(s.peakPoolBytes, poolBytesInUse) }
        }
    }

    /// The figures so far, with the output's frame accounting.
    public func snapshot(
        preset: String, width: Int, height: Int, source: String, counts: OutputCounts,
        poolPeakBytes: Int? = nil
    ) -> StatsSnapshot {
        let rss = MemoryProbe.residentSet()
        return state.withLock { s in
            let span = s.firstResult.flatMap { first in s.lastResult.map { $0.seconds(since: first) } } ?? 0
            let fps = s.results > 1 && span > 0 ? Double(s.results - 1) / span : 0
            var drops: [String: Int] = [:]
            for reason in DropReason.allCases { drops[reason.rawValue] = counts.dropped(reason) }
            return StatsSnapshot(
                preset: preset, width: width, height: height, source: source,
                framesCaptured: counts.captured, framesDelivered: counts.delivered, framesDropped: counts.droppedTotal,
                drops: drops, fps: fps,
                latencyMilliseconds: Percentiles(s.result), deliveryLatencyMilliseconds: Percentiles(s.delivery),
                processingMilliseconds: Percentiles(s.processing),
                stages: s.stageOrder.map { StagePercentiles(stage: $0, percentiles: Percentiles(s.stages[$0]!)) },
                memory: .init(
                    rssPeakMB: Double(max(s.peakRSS, rss?.peak ?? 0)) / 1_048_576,
                    rssCurrentMB: Double(rss?.current ?? 0) / 1_048_576,
                    poolPeakBytes: max(s.peakPoolBytes, poolPeakBytes ?? 0)),
                latencyHistogram: StatsSnapshot.buckets(s.result), processingHistogram: StatsSnapshot.buckets(s.processing),
                timeline: s.timeline)
        }
    }
}

/// p50/p95/p99/max of a histogram, in milliseconds.
public struct Percentiles: Sendable, Equatable {
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
    public init(_ h: LatencyHistogram) {
        p50 = h.percentileMilliseconds(50)
        p95 = h.percentileMilliseconds(95)
        p99 = h.percentileMilliseconds(99)
        max = h.maxMilliseconds
    }
}

public struct StagePercentiles: Sendable, Equatable {
    public var stage: String
    public var percentiles: Percentiles
}

/// Everything measured in one run at one preset. Its JSON is written by `StatsJSON`, one mapping
/// for the summary, `--stats`, `profile` and the preview (docs/stats.md).
public struct StatsSnapshot: Sendable, Equatable {
    public struct Memory: Sendable, Equatable {
        public var rssPeakMB: Double
        public var rssCurrentMB: Double
        public var poolPeakBytes: Int
    }
    public struct Bucket: Sendable, Equatable {
        public var lowMs: Double
        public var highMs: Double
        public var count: Int
    }
    public var preset: String
    public var width: Int
    public var height: Int
    public var source: String
    public var framesCaptured: Int
    public var framesDelivered: Int
    public var framesDropped: Int
    public var drops: [String: Int]
    public var fps: Double
    public var latencyMilliseconds: Percentiles
    public var deliveryLatencyMilliseconds: Percentiles
    public var processingMilliseconds: Percentiles
    public var stages: [StagePercentiles]
    public var memory: Memory
    public var latencyHistogram: [Bucket]
    /// The processing-time distribution (what `framekit merge` combines exactly).
    public var processingHistogram: [Bucket]
    public var timeline: [StatsRecorder.TimelinePoint]
    /// The face tracker's passes, where the run tracked faces (set by the caller: the recorder
    /// sees frames, not passes).
    public var detectionPasses: DetectionPasses? = nil

    static func buckets(_ h: LatencyHistogram) -> [Bucket] {
        h.buckets.map { .init(lowMs: Double($0.lowMicroseconds) / 1000, highMs: Double($0.highMicroseconds) / 1000, count: $0.count) }
    }
}
