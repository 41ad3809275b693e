import Foundation
import FrameCore

/// Many runs' statistics as one (a batch's inputs, for `framekit merge`): frames and drops
/// summed; latency and processing percentiles computed from the runs' histograms merged bucket
/// by bucket — never averaged — so they are as exact as a single run's (within a bucket, 1.6%);
/// maxima exact.
package enum StatsMerge {
    /// A `--stats` document (``StatsJSON/document(_:)``) read back; nil if it is not one.
    package static func snapshot(fromDocument d: [String: Any]) -> StatsSnapshot? {
        func int(_ key: String) -> Int? { (d[key] as? NSNumber)?.intValue }
        guard let captured = int("frames_captured"), let delivered = int("frames_delivered"), let dropped = int("frames_dropped") else {
            return nil
        }
        func percentiles(_ key: String) -> Percentiles {
            let p = d[key] as? [String: Any] ?? [:]
            func v(_ k: String) -> Double { (p[k] as? NSNumber)?.doubleValue ?? 0 }
            return Percentiles(p50: v("p50"), p95: v("p95"), p99: v("p99"), max: v("max"))
        }
        func buckets(_ key: String) -> [StatsSnapshot.Bucket] {
            (d[key] as? [[String: Any]] ?? []).compactMap { b in
                guard let low = (b["low_ms"] as? NSNumber)?.doubleValue, let high = (b["high_ms"] as? NSNumber)?.doubleValue,
                    let count = (b["count"] as? NSNumber)?.intValue
                else { return nil }
                return .init(lowMs: low, highMs: high, count: count)
            }
        }
        let memory = d["memory"] as? [String: Any] ?? [:]
        let drops = (d["drops"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.intValue }
        return StatsSnapshot(
            preset: d["preset"] as? String ?? "", width: int("width") ?? 0, height: int("height") ?? 0,
            source: d["input"] as? String ?? d["source"] as? String ?? "",
            framesCaptured: captured, framesDelivered: delivered, framesDropped: dropped, drops: drops,
            fps: (d["fps"] as? NSNumber)?.doubleValue ?? 0, latencyMilliseconds: percentiles("latency_ms"),
            deliveryLatencyMilliseconds: percentiles("delivery_latency_ms"), processingMilliseconds: percentiles("processing_ms"),
            stages: [],
            memory: .init(
                rssPeakMB: (memory["rss_peak_mb"] as? NSNumber)?.doubleValue ?? 0,
                rssCurrentMB: (memory["rss_current_mb"] as? NSNumber)?.doubleValue ?? 0,
                poolPeakBytes: (memory["pool_peak_bytes"] as? NSNumber)?.intValue ?? 0),
            latencyHistogram: buckets("latency_histogram"), processingHistogram: buckets("processing_histogram"), timeline: [])
    }

    /// `snapshots` as one run named `source`.
    package static func merge(_ snapshots: [StatsSnapshot], source: String) -> StatsSnapshot {
        func histogram(_ pick: (StatsSnapshot) -> [StatsSnapshot.Bucket], max: (StatsSnapshot) -> Double) -> LatencyHistogram {
            var h = LatencyHistogram()
            for s in snapshots {
                for b in pick(s) { h.add(microseconds: UInt64((b.lowMs * 1000).rounded()), count: b.count) }
                h.raiseMaximum(toMicroseconds: UInt64((max(s) * 1000).rounded()))
            }
            return h
        }
        let latency = histogram({ $0.latencyHistogram }, max: { $0.latencyMilliseconds.max })
        let processing = histogram({ $0.processingHistogram }, max: { $0.processingMilliseconds.max })
        var drops: [String: Int] = [:]
        for s in snapshots { for (k, v) in s.drops { drops[k, default: 0] += v } }
        // Results per second over all the runs' time: each run's results over its own rate.
        let seconds = snapshots.reduce(0.0) { $0 + ($1.fps > 0 ? Double(max(0, $1.framesDelivered - 1)) / $1.fps : 0) }
        let results = snapshots.reduce(0) { $0 + max(0, $1.framesDelivered - 1) }
        let sizes = Set(snapshots.map { "\($0.width)x\($0.height)" })
        let presets = Set(snapshots.map(\.preset))
        return StatsSnapshot(
            preset: presets.count == 1 ? presets.first! : "mixed", width: sizes.count == 1 ? snapshots[0].width : 0,
            height: sizes.count == 1 ? snapshots[0].height : 0, source: source,
            framesCaptured: snapshots.reduce(0) { $0 + $1.framesCaptured },
            framesDelivered: snapshots.reduce(0) { $0 + $1.framesDelivered },
            framesDropped: snapshots.reduce(0) { $0 + $1.framesDropped }, drops: drops, fps: seconds > 0 ? Double(results) / seconds : 0,
            latencyMilliseconds: Percentiles(latency), deliveryLatencyMilliseconds: Percentiles(LatencyHistogram()),
            processingMilliseconds: Percentiles(processing), stages: [],
            memory: .init(
                rssPeakMB: snapshots.map(\.memory.rssPeakMB).max() ?? 0, rssCurrentMB: 0,
                poolPeakBytes: snapshots.map(\.memory.poolPeakBytes).max() ?? 0),
            latencyHistogram: StatsSnapshot.buckets(latency), processingHistogram: StatsSnapshot.buckets(processing), timeline: [])
    }
}

extension Percentiles {
    init(p50: Double, p95: Double, p99: Double, max: Double) {
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
        self.max = max
    }
}
