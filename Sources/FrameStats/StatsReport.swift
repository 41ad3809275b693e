import Foundation
import FrameCore

/// An HTML page a person can open: per preset, the figures, the latency distribution, the
/// per-frame latency over time with drops marked, and bars comparing presets. Self-contained
/// (inline SVG and CSS, no script, nothing fetched).
public enum StatsReport {
    /// An input a batch could not process, listed in the report beside those it did.
    public struct Failure: Sendable {
        public var input: String
        public var error: String
        public var exitCode: Int
        public init(input: String, error: String, exitCode: Int) {
            self.input = input
            self.error = error
            self.exitCode = exitCode
        }
    }

    /// - Parameters:
    ///   - snapshots: one per run (a preset of `profile`, a camera of `detect`, an input of a batch).
    ///   - title: the page's title and heading.
    ///   - failures: inputs that failed (`merge`): listed, not left out.
    ///   - firstIsMerged: the first snapshot sums the others (`merge`): labelled so, and figures
    ///     that cannot be merged (capture → delivery, current RSS) are shown as not kept.
    public static func html(
        for snapshots: [StatsSnapshot], title: String, failures: [Failure] = [], firstIsMerged: Bool = false
    ) -> String {
        // Runs are told apart by preset where presets differ (profile), else by source: a batch's
        // inputs (merge) always by their names.
        let byPreset =
            !firstIsMerged && Set(snapshots.map(\.preset)).count == snapshots.count
        let labels = snapshots.enumerated().map { i, s in
            firstIsMerged && i == 0 ? "merged" : byPreset ? s.preset : URL(fileURLWithPath: s.source).lastPathComponent
        }
        let runs = snapshots.count - (firstIsMerged ? 1 : 0)
        var body = "<h1>\(escape(title))</h1>\n"
        body += "<p class=\"meta\">Generated \(escape(ISO8601DateFormatter().string(from: Date()))) · \(runs) run(s)"
        body += (failures.isEmpty ? "" : " · \(failures.count) failed") + "</p>\n"
        if !failures.isEmpty {
            body +=
                "<section id=\"failures\"><h2>Failed inputs</h2>\n<table class=\"failures\"><tr><th>input</th><th>exit</th><th>error</th></tr>"
            body += failures.map { "<tr><th>\(escape($0.input))</th><td>\($0.exitCode)</td><td>\(escape($0.error))</td></tr>" }.joined()
            body += "</table></section>\n"
        }
        if snapshots.count > 1 {
            body += "<section><h2>\(byPreset ? "Presets" : "Runs") compared</h2>\n\(presetBars(snapshots, labels: labels))</section>\n"
        }
        for (i, s) in snapshots.enumerated() {
            let merged = firstIsMerged && i == 0
            let size = s.width > 0 ? "\(s.width)x\(s.height)" : "mixed sizes"
            // Each part once: a preset that is also the label, a size that is the preset's name.
            var heading: [String] = []
            for part in [labels[i], s.preset, size, s.source] where !part.isEmpty && !heading.contains(part) { heading.append(part) }
            body +=
                "<section id=\"\(byPreset && !merged ? "preset-\(escape(s.preset))" : "run-\(i)")\"><h2>\(escape(heading.joined(separator: " · ")))</h2>\n"
            body += table(s, merged: merged)
            body += "<h3>Latency distribution (capture → result)</h3>\n\(distribution(s))"
            body += "<h3>Latency per frame, drops marked</h3>\n\(timeline(s))</section>\n"
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>
            body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 960px; color: #222; }
            h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
            table { border-collapse: collapse; margin: 1em 0; } td, th { padding: .25em .8em; border-bottom: 1px solid #eee; text-align: right; }
            th { text-align: left; font-weight: 600; } .meta { color: #666; } svg { background: #fafafa; border: 1px solid #ddd; }
            .legend span { display: inline-block; margin-right: 1.2em; } .sw { width: .8em; height: .8em; display: inline-block; margin-right: .3em; }
            </style></head><body>
            \(body)
            </body></html>
            """
    }

    /// The latency line's colour; no drop reason shares it (photo_capture's blue once did).
    package static let latencyColor = "#0072b2"

    /// One colour per drop reason (Okabe–Ito's, told apart with colour-blindness too).
    package static let dropColors: [String: String] = [
        "frame_was_late": "#e69f00", "out_of_buffers": "#cc3311", "discontinuity": "#7b3294", "corrupt": "#000000",
        "photo_capture": "#009e73", "processing_failed": "#56b4e9"
    ]

    static func table(_ s: StatsSnapshot, merged: Bool = false) -> String {
        let notKept = "— (not kept across inputs)"
        func ms(_ v: Double) -> String { String(format: "%.2f", v) }
        var rows = [
            ("Frames captured", "\(s.framesCaptured)"), ("Frames delivered", "\(s.framesDelivered)"),
            ("Frames dropped", "\(s.framesDropped)")
        ]
        for key in DropReason.allCases.map(\.rawValue) {
            rows.append(("· \(key)", "\(s.drops[key] ?? 0)"))
        }
        rows += [
            ("Results per second", String(format: "%.2f", s.fps)),
            (
                "Latency p50 / p95 / p99 / max (ms)",
                [s.latencyMilliseconds.p50, s.latencyMilliseconds.p95, s.latencyMilliseconds.p99, s.latencyMilliseconds.max].map(ms).joined(
                    separator: " / ")
            ),
            (
                "Capture → delivery p50 / p99 (ms)",
                merged ? notKept : "\(ms(s.deliveryLatencyMilliseconds.p50)) / \(ms(s.deliveryLatencyMilliseconds.p99))"
            ),
            ("Processing p50 / p99 (ms)", "\(ms(s.processingMilliseconds.p50)) / \(ms(s.processingMilliseconds.p99))")
        ]
        for stage in s.stages {
            rows.append(("· stage \(stage.stage) p50 / p99 (ms)", "\(ms(stage.percentiles.p50)) / \(ms(stage.percentiles.p99))"))
        }
        if merged { rows.append(("Stages", notKept)) }
        // The tracker's detector passes: what the per-frame latency above does not show when
        // passes run beside the frame path (a camera, --realtime): how long they took and how
        // many frames late their faces came.
        if let p = s.detectionPasses {
            rows += [
                ("Detection passes", "\(p.passes)"), ("· frames without a pass", "\(p.framesWithoutPass)"),
                (
                    "· pass time p50 / p99 / max (ms)",
                    [p.latencyP50Milliseconds, p.latencyP99Milliseconds, p.latencyMaxMilliseconds].map(ms).joined(separator: " / ")
                ),
                (
                    "· faces reported after their frame p50 / max (frames)",
                    String(format: "%.1f / %d", p.resultAgeP50Frames, p.resultAgeMaxFrames)
                )
            ]
            if p.budgetWaitSeconds > 0 { rows.append(("· waited for the CPU budget (s)", String(format: "%.2f", p.budgetWaitSeconds))) }
        }
        rows += [
            (merged ? "Peak RSS of an input (MB)" : "Peak RSS (MB)", String(format: "%.1f", s.memory.rssPeakMB)),
            ("Peak pool bytes in use", "\(s.memory.poolPeakBytes)")
        ]
        return "<table class=\"figures\">" + rows.map { "<tr><th>\(escape($0.0))</th><td>\(escape($0.1))</td></tr>" }.joined()
            + "</table>\n"
    }

    /// Bars of the latency histogram, re-binned into 40 equal bins up to the maximum.
    static func distribution(_ s: StatsSnapshot) -> String {
        let width = 900.0
        let height = 220.0
        let left = plotLeft
        let bottom = 30.0
        guard let top = s.latencyHistogram.map(\.highMs).max(), top > 0 else { return "<p>No frames delivered.</p>\n" }
        var bins = [Int](repeating: 0, count: 40)
        for b in s.latencyHistogram {
            let mid = (b.lowMs + b.highMs) / 2
            bins[min(39, Int(mid / top * 40))] += b.count
        }
        let peak = Double(bins.max() ?? 1)
        let barWidth = (width - left - 10) / 40
        var svg =
            "<svg class=\"plot distribution\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"latency distribution\">\n"
        for (i, c) in bins.enumerated() where c > 0 {
            let h = Double(c) / peak * (height - bottom - 10)
            let x = left + Double(i) * barWidth
            svg +=
                "<rect class=\"bar\" x=\"\(f(x))\" y=\"\(f(height - bottom - h))\" width=\"\(f(barWidth - 1))\" height=\"\(f(h))\" fill=\"\(latencyColor)\">"
                + "<title>\(f(Double(i) * top / 40))–\(f(Double(i + 1) * top / 40)) ms: \(c)</title></rect>\n"
        }
        svg += axis(
            width: width, height: height, left: left, bottom: bottom, xMax: top, xLabel: "latency (ms)", yLabel: "frames", yMax: peak,
            yTick: { String(Int($0.rounded())) })
        return svg + "</svg>\n"
    }

    /// Latency of each delivered frame against its sequence number; drops as coloured ticks.
    static func timeline(_ s: StatsSnapshot) -> String {
        let width = 900.0
        let height = 240.0
        let left = plotLeft
        let bottom = 30.0
        guard let first = s.timeline.map(\.sequence).min(), let last = s.timeline.map(\.sequence).max() else {
            return "<p>No frames.</p>\n"
        }
        let span = Double(max(1, last - first))
        let yMax = max(1, s.timeline.compactMap(\.latencyMilliseconds).max() ?? 1) * 1.1
        func x(_ seq: UInt64) -> Double { left + Double(seq - first) / span * (width - left - 10) }
        func y(_ v: Double) -> Double { height - bottom - v / yMax * (height - bottom - 10) }
        var svg =
            "<svg class=\"plot timeline\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"latency per frame\">\n"
        let points = s.timeline.compactMap { p in p.latencyMilliseconds.map { String(format: "%.1f,%.1f", x(p.sequence), y($0)) } }
        svg +=
            "<polyline class=\"latency\" fill=\"none\" stroke=\"\(latencyColor)\" stroke-width=\"1.2\" points=\"\(points.joined(separator: " "))\"/>\n"
        for p in s.timeline {
            guard let reason = p.dropReason else { continue }
            let at = f(x(p.sequence))
            svg +=
                "<line class=\"drop \(reason.rawValue)\" x1=\"\(at)\" x2=\"\(at)\" y1=\"\(f(height - bottom))\" y2=\"\(f(height - bottom - 12))\" "
                + "stroke=\"\(dropColors[reason.rawValue] ?? "#000")\" stroke-width=\"1.5\"/>\n"
        }
        svg += axis(
            width: width, height: height, left: left, bottom: bottom, xMax: nil, xLabel: "frame \(first)…\(last)", yLabel: "ms", yMax: yMax)
        svg += "</svg>\n<p class=\"legend\"><span><i class=\"sw\" style=\"background:\(latencyColor)\"></i>latency</span>"
        // Only the reasons marked on this plot.
        let marked = Set(s.timeline.compactMap { $0.dropReason?.rawValue })
        for (key, color) in dropColors.sorted(by: { $0.key < $1.key }) where marked.contains(key) {
            svg += "<span><i class=\"sw\" style=\"background:\(color)\"></i>dropped: \(key)</span>"
        }
        return svg + "</p>\n"
    }

    /// Per run (labelled `labels`): results per second, then p50 and p99 latency — two charts,
    /// each with one unit on its labelled axis (frames a second and milliseconds shared one
    /// unlabelled axis, so neither could be read off it).
    static func presetBars(_ snapshots: [StatsSnapshot], labels: [String]) -> String {
        bars(snapshots, labels: labels, series: [("fps", "#009e73", { $0.fps })], unit: "frames/s", name: "rate")
            + bars(
                snapshots, labels: labels,
                series: [
                    ("p50 ms", "#0072b2", { $0.latencyMilliseconds.p50 }), ("p99 ms", "#d55e00", { $0.latencyMilliseconds.p99 })
                ],
                unit: "ms", name: "latency")
    }

    /// Grouped bars, one group per run, one bar per series, on an axis in `unit`.
    static func bars(
        _ snapshots: [StatsSnapshot], labels: [String], series: [(String, String, (StatsSnapshot) -> Double)], unit: String,
        name: String
    ) -> String {
        let width = 900.0
        let height = 220.0
        let left = plotLeft
        let bottom = 40.0
        let top = max(1, snapshots.flatMap { s in series.map { $0.2(s) } }.max() ?? 1) * 1.1
        let group = (width - left - 10) / Double(snapshots.count)
        let bar = group / Double(series.count + 1)
        var svg =
            "<svg class=\"plot presets \(name)\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\" aria-label=\"\(name) per run, \(unit)\">\n"
        for (g, s) in snapshots.enumerated() {
            for (k, (label, color, value)) in series.enumerated() {
                let v: Double = value(s)
                let h: Double = v / top * (height - bottom - 10)
                let x: Double = left + Double(g) * group + Double(k) * bar + bar / 2
                svg +=
                    "<rect class=\"bar\" x=\"\(f(x))\" y=\"\(f(height - bottom - h))\" width=\"\(f(bar - 2))\" height=\"\(f(h))\" fill=\"\(color)\">"
                    + "<title>\(escape(labels[g])) \(label): \(f(v))</title></rect>\n"
            }
            svg +=
                "<text x=\"\(f(left + (Double(g) + 0.5) * group))\" y=\"\(f(height - bottom + 16))\" text-anchor=\"middle\" font-size=\"12\">\(escape(labels[g]))</text>\n"
        }
        svg += axis(width: width, height: height, left: left, bottom: bottom, xMax: nil, xLabel: "", yLabel: unit, yMax: top)
        svg +=
            "</svg>\n<p class=\"legend\">" + series.map { "<span><i class=\"sw\" style=\"background:\($0.1)\"></i>\($0.0)</span>" }.joined()
            + "</p>\n"
        return svg
    }

    /// The plots' left margin: the y axis's tick labels, and its name turned along it.
    package static let plotLeft = 64.0

    static func axis(
        width: Double, height: Double, left: Double, bottom: Double, xMax: Double?, xLabel: String, yLabel: String,
        yMax: Double? = nil, yTick: (Double) -> String = f
    ) -> String {
        let base = height - bottom
        let plotWidth = width - left - 10
        let plotHeight = height - bottom - 10
        var s = "<line x1=\"\(f(left))\" y1=\"\(f(base))\" x2=\"\(f(width - 10))\" y2=\"\(f(base))\" stroke=\"#444\"/>"
        s += "<line x1=\"\(f(left))\" y1=\"10\" x2=\"\(f(left))\" y2=\"\(f(base))\" stroke=\"#444\"/>\n"
        for i in 0...4 {
            let t = Double(i) / 4
            if let xMax {
                let anchor = i == 4 ? "end" : "middle" // the last tick label stays inside the plot
                s +=
                    "<text x=\"\(f(left + t * plotWidth))\" y=\"\(f(base + 14))\" font-size=\"11\" text-anchor=\"\(anchor)\">\(f(xMax * t))</text>"
            }
            if let yMax {
                s +=
                    "<text x=\"\(f(left - 4))\" y=\"\(f(base - t * plotHeight + 4))\" font-size=\"11\" text-anchor=\"end\">\(yTick(yMax * t))</text>"
            }
        }
        s += "<text x=\"\(f((left + width) / 2))\" y=\"\(f(height - 4))\" font-size=\"12\" text-anchor=\"middle\">\(escape(xLabel))</text>"
        // The axis's name along it, left of the tick labels: never over the first bar.
        s +=
            "<text class=\"y-label\" transform=\"translate(12,\(f(10 + plotHeight / 2))) rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">"
            + "\(escape(yLabel))</text>\n"
        return s
    }

    /// One decimal: enough for pixel coordinates and milliseconds on a plot.
    package static func f(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Text made safe inside HTML elements and quoted attributes (the report and the preview
    /// page both use this one).
    package static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#39;")
    }
}
