import Foundation
import FrameCore

/// Many runs' statistics as one (a batch's inputs, for `framekit merge`): frames and drops
/// summed; latency and processing percentiles computed from the runs' histograms merged bucket
/// by bucket — never averaged — so they are as exact as a single run's (within a bucket, 1.6%);
/// maxima exact.
package enum StatsMerge {
    /// A `--stats` document (``StatsJSON/document(_:)``) read back; nil if it is not one —
    /// and not one if a figure is one FrameKit cannot have written: a count that is negative,
    /// fractional or past 2^50, a time that is negative, not finite or past a year, frames that
    /// do not add up. A forged or damaged file is listed as unreadable, never merged.
    package static func snapshot(fromDocument d: [String: Any]) -> StatsSnapshot? {
        /// A whole number in 0…2^50; nil for anything else (absent, text, -1, 0.5, 1e30).
        func count(_ value: Any?) -> Int? {
            guard let n = value as? NSNumber else { return nil }
            let v = n.doubleValue
            guard v >= 0, v <= maximumCount, v == v.rounded(.towardZero) else { return nil }
            return n.intValue
        }
        /// Milliseconds (or another non-negative figure) in 0…a year; nil for anything else.
        func time(_ value: Any?) -> Double? {
            guard let n = value as? NSNumber else { return nil }
            let v = n.doubleValue
            return v >= 0 && v <= maximumMilliseconds ? v : nil
        }
        var valid = true
        /// An optional figure: absent is `fallback`, present must be valid.
        func optional<T>(_ value: Any?, _ read: (Any?) -> T?, _ fallback: T) -> T {
            guard let value, !(value is NSNull) else { return fallback }
            guard let v = read(value) else {
                valid = false
                return fallback
            }
            return v
        }
        guard let captured = count(d["frames_captured"]), let delivered = count(d["frames_delivered"]),
            let dropped = count(d["frames_dropped"]), delivered.saturatingAdd(dropped) == captured
        else { return nil }
        func percentiles(_ key: String) -> Percentiles {
            let p = d[key] as? [String: Any] ?? [:]
            func v(_ k: String) -> Double { optional(p[k], time, 0) }
            return Percentiles(p50: v("p50"), p95: v("p95"), p99: v("p99"), max: v("max"))
        }
        func buckets(_ key: String) -> [StatsSnapshot.Bucket] {
            (d[key] as? [[String: Any]] ?? []).compactMap { b in
                guard let low = time(b["low_ms"]), let high = time(b["high_ms"]), low <= high, let count = count(b["count"]) else {
                    valid = false
                    return nil
                }
                return .init(lowMs: low, highMs: high, count: count)
            }
        }
        let memory = d["memory"] as? [String: Any] ?? [:]
        // The tracker's passes, for the input's own section of a merged report (not summed:
        // pass percentiles have no histogram to merge).
        var passes: DetectionPasses?
        if let p = d["detection_passes"] as? [String: Any] {
            let latency = p["latency_ms"] as? [String: Any] ?? [:]
            let age = p["result_age_frames"] as? [String: Any] ?? [:]
            passes = DetectionPasses(
                passes: optional(p["passes"], count, 0), framesWithoutPass: optional(p["frames_without_pass"], count, 0),
                latencyP50Milliseconds: optional(latency["p50"], time, 0), latencyP99Milliseconds: optional(latency["p99"], time, 0),
                latencyMaxMilliseconds: optional(latency["max"], time, 0), resultAgeP50Frames: optional(age["p50"], time, 0),
                resultAgeMaxFrames: optional(age["max"], count, 0), budgetWaitSeconds: optional(p["budget_wait_s"], time, 0))
        }
        let drops = (d["drops"] as? [String: Any] ?? [:]).mapValues { optional($0, count, 0) }
        var snapshot = StatsSnapshot(
            preset: d["preset"] as? String ?? "", width: optional(d["width"], count, 0), height: optional(d["height"], count, 0),
            source: d["input"] as? String ?? d["source"] as? String ?? "",
            framesCaptured: captured, framesDelivered: delivered, framesDropped: dropped, drops: drops,
            fps: optional(d["fps"], time, 0), latencyMilliseconds: percentiles("latency_ms"),
            deliveryLatencyMilliseconds: percentiles("delivery_latency_ms"), processingMilliseconds: percentiles("processing_ms"),
            stages: [],
            memory: .init(
                rssPeakMB: optional(memory["rss_peak_mb"], time, 0), rssCurrentMB: optional(memory["rss_current_mb"], time, 0),
                poolPeakBytes: optional(memory["pool_peak_bytes"], count, 0)),
            latencyHistogram: buckets("latency_histogram"), processingHistogram: buckets("processing_histogram"), timeline: [])
        snapshot.detectionPasses = passes
        return valid ? snapshot : nil
    }

    /// The largest count a stats file may hold (2^50: 36,000 years of frames at 1,000 a second);
    /// thousands of files of such counts still sum without overflow.
    static let maximumCount = Double(1 << 50)
    /// The largest time (ms) or other figure a stats file may hold: a year.
    static let maximumMilliseconds = 365.25 * 86_400_000

    /// `snapshots` as one run named `source`.
    package static func merge(_ snapshots: [StatsSnapshot], source: String) -> StatsSnapshot {
        func histogram(_ pick: (StatsSnapshot) -> [StatsSnapshot.Bucket], max: (StatsSnapshot) -> Double) -> LatencyHistogram {
            var h = LatencyHistogram()
            for s in snapshots {
                for b in pick(s) { h.add(microseconds: UInt64(saturating: (b.lowMs * 1000).rounded()), count: b.count) }
                h.raiseMaximum(toMicroseconds: UInt64(saturating: (max(s) * 1000).rounded()))
            }
            return h
        }
        let latency = histogram({ $0.latencyHistogram }, max: { $0.latencyMilliseconds.max })
        let processing = histogram({ $0.processingHistogram }, max: { $0.processingMilliseconds.max })
        var drops: [String: Int] = [:]
        for s in snapshots { for (k, v) in s.drops { drops[k, default: 0] = drops[k, default: 0].saturatingAdd(v) } }
        // Results per second over all the runs' time: each run's results over its own rate.
        let seconds = snapshots.reduce(0.0) { $0 + ($1.fps > 0 ? Double(max(0, $1.framesDelivered - 1)) / $1.fps : 0) }
        let results = snapshots.reduce(0) { $0.saturatingAdd(max(0, $1.framesDelivered - 1)) }
        let sizes = Set(snapshots.map { "\($0.width)x\($0.height)" })
        let presets = Set(snapshots.map(\.preset))
        return StatsSnapshot(
            preset: presets.count == 1 ? presets.first! : "mixed", width: sizes.count == 1 ? snapshots[0].width : 0,
            height: sizes.count == 1 ? snapshots[0].height : 0, source: source,
            framesCaptured: snapshots.reduce(0) { $0.saturatingAdd($1.framesCaptured) },
            framesDelivered: snapshots.reduce(0) { $0.saturatingAdd($1.framesDelivered) },
            framesDropped: snapshots.reduce(0) { $0.saturatingAdd($1.framesDropped) }, drops: drops,
            fps: seconds > 0 ? Double(results) / seconds : 0,
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
