import FrameCore

/// One source a metrics endpoint reports: its name (the `source` label), its recorder and its
/// frame accounting.
public struct MetricsSource: Sendable {
    public var name: String
    public var stats: StatsRecorder
    public var counts: @Sendable () -> OutputCounts
    /// The face tracker's passes, where there is one.
    public var passes: (@Sendable () -> DetectionPasses)?
    public init(
        name: String, stats: StatsRecorder, counts: @escaping @Sendable () -> OutputCounts,
        passes: (@Sendable () -> DetectionPasses)? = nil
    ) {
        self.name = name
        self.stats = stats
        self.counts = counts
        self.passes = passes
    }
}

/// The Prometheus text exposition format (version 0.0.4) of FrameKit's figures: monotonic
/// counters of frames captured, delivered and dropped by reason; capture → result latency and
/// processing time as histograms; the last frame's age; the process's resident memory.
public enum PrometheusText {
    /// `le` bounds in seconds: 1 ms … 2.5 s.
    static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    public static func render(_ sources: [MetricsSource], now: Timestamp = .now()) -> String {
        var out: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            out.append("# HELP \(name) \(help)")
            out.append("# TYPE \(name) \(type)")
        }
        let samples = sources.map { ($0, $0.counts(), $0.stats.metricsSample()) }
        family("framekit_frames_captured_total", "counter", "Frames the source produced (delivered + dropped + pending).")
        for (s, c, _) in samples { out.append("framekit_frames_captured_total{source=\"\(label(s.name))\"} \(c.captured)") }
        family("framekit_frames_delivered_total", "counter", "Frames delivered to the consumer.")
        for (s, c, _) in samples { out.append("framekit_frames_delivered_total{source=\"\(label(s.name))\"} \(c.delivered)") }
        family("framekit_frames_dropped_total", "counter", "Frames dropped, by reason (docs/stats.md).")
        for (s, c, _) in samples {
            for reason in DropReason.allCases {
                out.append("framekit_frames_dropped_total{source=\"\(label(s.name))\",reason=\"\(reason.rawValue)\"} \(c.dropped(reason))")
            }
        }
        func histogram(_ name: String, _ help: String, _ pick: (StatsRecorder.MetricsSample) -> LatencyHistogram) {
            family(name, "histogram", help)
            for (s, _, m) in samples {
                let h = pick(m)
                let source = "source=\"\(label(s.name))\""
                for bound in bounds {
                    out.append("\(name)_bucket{\(source),le=\"\(bound)\"} \(h.count(atMostMicroseconds: UInt64(bound * 1_000_000)))")
                }
                out.append("\(name)_bucket{\(source),le=\"+Inf\"} \(h.count)")
                out.append("\(name)_sum{\(source)} \(Double(h.sumMicroseconds) / 1_000_000)")
                out.append("\(name)_count{\(source)} \(h.count)")
            }
        }
        histogram("framekit_latency_seconds", "Capture to result, per delivered frame.") { $0.latency }
        histogram("framekit_processing_seconds", "Processing time of the output's stages, per delivered frame.") { $0.processing }
        family(
            "framekit_last_frame_age_seconds", "gauge", "Seconds since the source's last frame (delivered or dropped); -1 before the first."
        )
        for (s, _, m) in samples {
            out.append(
                "framekit_last_frame_age_seconds{source=\"\(label(s.name))\"} \(m.lastActivity.map { now.seconds(since: $0) } ?? -1)")
        }
        // Detection passes (sources with a face tracker): whether detection keeps up.
        let passing = sources.compactMap { s in s.passes.map { (s, $0()) } }
        if !passing.isEmpty {
            family("framekit_detection_passes_total", "counter", "Face detector passes finished and joined with the tracks.")
            for (s, p) in passing { out.append("framekit_detection_passes_total{source=\"\(label(s.name))\"} \(p.passes)") }
            family(
                "framekit_detection_frames_without_pass_total", "counter",
                "Frames that came while a pass was under way or held back by the CPU budget.")
            for (s, p) in passing {
                out.append("framekit_detection_frames_without_pass_total{source=\"\(label(s.name))\"} \(p.framesWithoutPass)")
            }
            // Summaries (Prometheus' own convention for quantiles): the quantiles over the last
            // 512 passes, _sum and _count over the run; each maximum a gauge of its own.
            func summary(_ name: String, _ help: String, _ pick: (DetectionPasses) -> (quantiles: [(String, Double)], sum: Double)) {
                family(name, "summary", help)
                for (s, p) in passing {
                    let source = "source=\"\(label(s.name))\""
                    let (quantiles, sum) = pick(p)
                    for (q, value) in quantiles { out.append("\(name){\(source),quantile=\"\(q)\"} \(value)") }
                    out.append("\(name)_sum{\(source)} \(sum)")
                    out.append("\(name)_count{\(source)} \(p.passes)")
                }
            }
            func gauge(_ name: String, _ help: String, _ pick: (DetectionPasses) -> Double) {
                family(name, "gauge", help)
                for (s, p) in passing { out.append("\(name){source=\"\(label(s.name))\"} \(pick(p))") }
            }
            summary("framekit_detection_pass_seconds", "Pass latency: quantiles over the last 512 passes, sum and count over the run.") {
                ([("0.5", $0.latencyP50Milliseconds / 1000), ("0.99", $0.latencyP99Milliseconds / 1000)], $0.latencyTotalSeconds)
            }
            gauge("framekit_detection_pass_max_seconds", "The run's longest pass.") { $0.latencyMaxMilliseconds / 1000 }
            summary(
                "framekit_detection_result_age_frames",
                "Frames between a pass's frame and the first frame its faces were reported on: the median over the last 512 passes, sum and count over the run."
            ) { ([("0.5", $0.resultAgeP50Frames)], Double($0.resultAgeTotalFrames)) }
            gauge("framekit_detection_result_age_max_frames", "The run's oldest result, in frames.") { Double($0.resultAgeMaxFrames) }
            family("framekit_detection_budget_wait_seconds_total", "counter", "Seconds passes waited for the CPU budget (--cpu-budget).")
            for (s, p) in passing {
                out.append("framekit_detection_budget_wait_seconds_total{source=\"\(label(s.name))\"} \(p.budgetWaitSeconds)")
            }
        }
        family("framekit_resident_memory_bytes", "gauge", "The process's resident set size.")
        out.append("framekit_resident_memory_bytes \(MemoryProbe.residentSet()?.current ?? 0)")
        return out.joined(separator: "\n") + "\n"
    }

    /// Healthy while every source has seen a frame within `stall` seconds (within `grace` of
    /// `started`, before the first frame, it is still starting).
    public static func isHealthy(
        _ sources: [MetricsSource], started: Timestamp, now: Timestamp = .now(), stall: Double = 5, grace: Double = 10
    )
        -> Bool
    {
        sources.allSatisfy { s in
            guard let last = s.stats.metricsSample().lastActivity else { return now.seconds(since: started) < grace }
            return now.seconds(since: last) <= stall
        }
    }

    /// A label value with `\`, `"` and newlines escaped.
    static func label(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(
            of: "\n", with: "\\n")
    }
}
