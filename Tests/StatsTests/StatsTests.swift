import Foundation
import FrameKit
import FrameTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("Stats: histograms, recorder, report")
struct StatsTests {
    @Test(
        "glibc's malloc controls resolve (the CLI's mmap threshold, profile's per-preset peak): mallopt takes the threshold, a new peak starts"
    )
    func glibcMalloc() throws {
        let mallopt = try #require(GlibcMalloc.mallopt)
        #expect(GlibcMalloc.trim != nil)
        #expect(mallopt(GlibcMalloc.mmapThreshold, 64 * 1024) == 1, "mallopt returns 1 when it takes a setting")
        #expect(MemoryProbe.startNewPeak())
    }

    /// The exact percentile of a sorted sample (nearest rank), the reference.
    func exact(_ sorted: [UInt64], _ p: Double) -> Double {
        Double(sorted[max(0, Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1)])
    }

    @Test(
        "percentiles are within 1.6% of a sorted reference, for several distributions",
        arguments: ["uniform", "lognormal", "bimodal", "constant"])
    func percentiles(distribution: String) {
        var generator = SystemRandomNumberGenerator()
        var samples: [UInt64] = []
        for _ in 0..<20_000 {
            let v: Double
            switch distribution {
            case "uniform": v = Double.random(in: 100...50_000, using: &generator)
            case "lognormal":
                let u1 = Double.random(in: 1e-9..<1, using: &generator)
                let u2 = Double.random(in: 0..<1, using: &generator)
                v = exp(9 + 0.8 * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
            case "bimodal": v = Bool.random(using: &generator) ? Double.random(in: 900...1100) : Double.random(in: 30_000...33_000)
            default: v = 16_667
            }
            samples.append(UInt64(v))
        }
        var histogram = LatencyHistogram()
        for s in samples { histogram.record(microseconds: s) }
        let sorted = samples.sorted()
        #expect(histogram.count == samples.count)
        #expect(histogram.maxMicroseconds == sorted.last!)
        for p in [50.0, 90, 95, 99, 99.9] {
            let reference = exact(sorted, p)
            let estimate = histogram.percentileMicroseconds(p)
            #expect(abs(estimate - reference) <= reference * 0.016 + 1, "\(distribution) p\(p): \(estimate) vs \(reference)")
        }
        #expect(histogram.percentileMicroseconds(100) <= Double(sorted.last!))
    }

    @Test("small values are exact, huge ones are clamped, not trapped")
    func edges() {
        var h = LatencyHistogram()
        for v: UInt64 in [0, 1, 2, 3, 63] { h.record(microseconds: v) }
        #expect(h.percentileMicroseconds(20) == 0 && h.percentileMicroseconds(100) == 63)
        h.record(microseconds: .max)
        h.record(seconds: -1)
        h.record(seconds: .infinity.nextDown)
        #expect(h.count == 8)
        var empty = LatencyHistogram()
        #expect(empty.percentileMilliseconds(99) == 0)
        empty.merge(h)
        #expect(empty.count == 8)
    }

    /// 100 results 20 ms after capture (10 ms detect + 2 ms annotate) at 30 fps, then one late drop.
    static func sampleSnapshot() throws -> StatsSnapshot {
        let recorder = StatsRecorder()
        let buffer = try PixelBuffer(width: 2, height: 2, format: .gray8)
        let start = Timestamp(nanoseconds: 1_000_000_000)
        for i in 0..<100 {
            var timings = StageDurations()
            timings.append(StageDuration(stage: "detect", seconds: 0.010))
            timings.append(StageDuration(stage: "annotate", seconds: 0.002))
            let captured = start.adding(seconds: Double(i) / 30)
            let frame = SampleBuffer(
                pixelBuffer: buffer, presentationTime: Double(i) / 30, sequenceNumber: UInt64(i),
                captureInstant: captured, stageDurations: timings)
            recorder.recordResult(of: frame, resultAt: captured.adding(seconds: 0.020))
        }
        recorder.recordDrop(DroppedFrame(sequenceNumber: 100, presentationTime: 3.33, reason: .frameWasLate))
        var counts = OutputCounts()
        counts.captured = 101
        counts.delivered = 100
        counts.dropped[.frameWasLate] = 1
        return recorder.snapshot(preset: "vga640x480", width: 640, height: 480, source: "test", counts: counts)
    }

    @Test("the recorder splits capture → delivery from processing and keeps per-stage figures")
    func recorder() throws {
        let s = try Self.sampleSnapshot()
        #expect(abs(s.latencyMilliseconds.p50 - 20) < 0.4)
        #expect(abs(s.processingMilliseconds.p50 - 12) < 0.3)
        #expect(abs(s.deliveryLatencyMilliseconds.p50 - 8) < 0.2)
        #expect(s.stages.map(\.stage) == ["detect", "annotate"])
        #expect(abs(s.fps - 30) < 0.01)
        #expect(s.framesDropped == 1 && s.drops["frame_was_late"] == 1 && s.drops["corrupt"] == 0)
        #expect(s.timeline.count == 101 && s.timeline.last?.dropReason == .frameWasLate)
        #expect(s.memory.rssPeakMB > 1)
    }

    @Test("one JSON mapping: the --stats document and the preview's live figures repeat the summary's fields exactly")
    func oneMapping() throws {
        let s = try Self.sampleSnapshot()
        func parse(_ json: JSON) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(json.text.utf8)) as? [String: Any])
        }
        let summary = try parse(.object(StatsJSON.summaryFields(s)))
        let document = try parse(StatsJSON.document(s))
        let live = try parse(StatsJSON.live(s, faces: 2, clients: 1))
        #expect(Set(summary.keys).isSubset(of: Set(document.keys)))
        // Compared as canonical JSON text (sorted keys): the same name, value and rounding.
        func canonical(_ value: Any?) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: [value ?? NSNull()], options: .sortedKeys), as: UTF8.self)
        }
        for (key, value) in summary {
            #expect(try canonical(document[key]) == canonical(value), "--stats differs from the summary at \(key)")
            if let shown = live[key] { #expect(try canonical(shown) == canonical(value), "/stats.json differs from the summary at \(key)") }
        }
        #expect(
            Set(live.keys) == [
                "frames_captured", "frames_delivered", "frames_dropped", "drops", "fps", "faces", "latency_ms", "clients", "memory"
            ])
        #expect(live["faces"] as? Int == 2 && live["clients"] as? Int == 1)
        let timeline = try #require(document["timeline"] as? [[String: Any]])
        #expect(timeline.count == 101 && timeline.last?["drop_reason"] as? String == "frame_was_late")
        let delivery = try #require(document["delivery_latency_ms"] as? [String: Double])
        #expect(abs((delivery["p50"] ?? 0) - 8) < 0.2)
        let buckets = try #require(document["latency_histogram"] as? [[String: Any]])
        #expect(buckets.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == 100)
    }

    @Test(
        "a program's JSON is the same mapping: jsonDocument is the --stats document, jsonSummary the summary; OutputCounts encodes drops keyed by reason"
    )
    func programJSON() throws {
        let s = try Self.sampleSnapshot()
        #expect(s.jsonDocument == StatsJSON.document(s).text && s.jsonSummary == JSON.object(StatsJSON.summaryFields(s)).text)
        var counts = OutputCounts()
        (counts.captured, counts.delivered, counts.dropped) = (5, 2, [.frameWasLate: 2, .corrupt: 1])
        let encoded = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(counts)) as? [String: Any])
        #expect(encoded["dropped"] as? [String: Int] == ["frame_was_late": 2, "corrupt": 1], "\(encoded)")
        #expect(try JSONDecoder().decode(OutputCounts.self, from: JSONEncoder().encode(counts)) == counts)
    }

    @Test("the timeline stays within its capacity over 100,000 frames and spans the whole run, drops kept")
    func boundedTimeline() throws {
        let recorder = StatsRecorder()
        let start = Timestamp.now()
        for n in 0..<100_000 {
            if n % 1000 == 999 {
                recorder.recordDrop(DroppedFrame(sequenceNumber: UInt64(n), presentationTime: Double(n) / 30, reason: .frameWasLate))
                continue
            }
            let frame = SampleBuffer(
                pixelBuffer: try PixelBuffer(width: 2, height: 2, format: .gray8), presentationTime: Double(n) / 30,
                sequenceNumber: UInt64(n), captureInstant: start)
            recorder.recordResult(of: frame, resultAt: start.adding(seconds: 0.01))
        }
        let s = recorder.snapshot(preset: "p", width: 2, height: 2, source: "t", counts: OutputCounts())
        #expect(s.timeline.count <= StatsRecorder.timelineCapacity && s.timeline.count > StatsRecorder.timelineCapacity / 4)
        #expect((s.timeline.first?.sequence ?? 99) < 10 && (s.timeline.last?.sequence ?? 0) >= 99_000)
        #expect(s.timeline.filter { $0.dropReason != nil }.count == 100, "every drop is on the plot")
    }

    /// A recorder that saw `pairs` delivered frames at 30 fps (even sequence numbers; latency
    /// `latency(i)` seconds), each followed by a drop for `reason(i)`.
    private func recorder(pairs: Int, latency: (Int) -> Double, reason: (Int) -> DropReason) throws -> StatsRecorder {
        let recorder = StatsRecorder()
        let buffer = try PixelBuffer(width: 2, height: 2, format: .gray8)
        for i in 0..<pairs {
            let t = Timestamp(nanoseconds: 1_000_000_000 + UInt64(i) * 33_000_000)
            recorder.recordResult(
                of: SampleBuffer(pixelBuffer: buffer, presentationTime: 0, sequenceNumber: UInt64(i * 2), captureInstant: t),
                resultAt: t.adding(seconds: latency(i)))
            recorder.recordDrop(DroppedFrame(sequenceNumber: UInt64(i * 2 + 1), presentationTime: 0, reason: reason(i)))
        }
        return recorder
    }

    @Test("the HTML report has the figures and its three plots, and is well-formed")
    func report() throws {
        let recorder = try recorder(
            pairs: 50, latency: { 0.005 + Double($0 % 7) / 1000 }, reason: { $0 % 2 == 0 ? .frameWasLate : .corrupt })
        var counts = OutputCounts()
        counts.captured = 100
        counts.delivered = 50
        counts.dropped = [.frameWasLate: 25, .corrupt: 25]
        let a = recorder.snapshot(preset: "vga640x480", width: 640, height: 480, source: "virtual", counts: counts)
        var b = a
        b.preset = "hd1280x720"
        let html = StatsReport.html(for: [a, b], title: "test <report>")
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(html.contains("test &lt;report&gt;"))
        // XHTML-ish check: the SVGs parse as XML.
        for svg in html.components(separatedBy: "<svg").dropFirst().map({
            "<svg xmlns=\"http://www.w3.org/2000/svg\"" + $0.components(separatedBy: "</svg>")[0] + "</svg>"
        }) {
            #expect(throws: Never.self) { try XMLDocument(xmlString: svg) }
        }
        #expect(html.components(separatedBy: "class=\"plot distribution\"").count == 3)
        #expect(html.components(separatedBy: "class=\"plot timeline\"").count == 3)
        // Runs compared in two charts, one unit each on a labelled axis (fps and ms shared one).
        #expect(html.components(separatedBy: "class=\"plot presets ").count == 3)
        let rate = try #require(
            html.components(separatedBy: "class=\"plot presets rate\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        let latency = try #require(
            html.components(separatedBy: "class=\"plot presets latency\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        #expect(rate.contains(">frames/s</text>") && rate.contains("fps: ") && !rate.contains("p99 ms"))
        #expect(latency.contains(">ms</text>") && latency.contains("p99 ms: ") && !latency.contains("fps: "))
        // Every drop reason's colour differs from the others and from the latency line's.
        let colours = Array(StatsReport.dropColors.values) + [StatsReport.latencyColor]
        #expect(Set(colours).count == colours.count, "\(StatsReport.dropColors)")
        #expect(html.components(separatedBy: "class=\"drop corrupt\"").count == 51) // 25 per preset, marked
        let polyline = try #require(html.components(separatedBy: "points=\"").dropFirst().first?.components(separatedBy: "\"").first)
        #expect(polyline.split(separator: " ").count == 50)
    }

    @Test(
        "the report: detection passes in the figures, headings without repeats, the histogram's count axis, a legend of what happened, a batch labelled by input"
    )
    func reportDetails() throws {
        let recorder = try recorder(pairs: 20, latency: { 0.002 + Double($0 % 5) / 1000 }, reason: { _ in .frameWasLate })
        var counts = OutputCounts()
        counts.captured = 40
        counts.delivered = 20
        counts.dropped = [.frameWasLate: 20]
        var a = recorder.snapshot(preset: "vga640x480", width: 640, height: 480, source: "/clips/a.mp4", counts: counts)
        a.detectionPasses = DetectionPasses(
            passes: 7, framesWithoutPass: 13, latencyP50Milliseconds: 227, latencyP99Milliseconds: 240, latencyMaxMilliseconds: 251,
            resultAgeP50Frames: 12, resultAgeMaxFrames: 21, budgetWaitSeconds: 0.5)
        var b = a
        b.preset = "hd1280x720"
        b.source = "/clips/b.mp4"
        b.detectionPasses = nil

        // profile: runs told apart by preset, each heading naming it once.
        let profile = StatsReport.html(for: [a, b], title: "profile")
        #expect(profile.contains("<h2>vga640x480 · 640x480 · /clips/a.mp4</h2>"), "\(profile)")
        // The passes a frame's latency does not show (227 ms while frames took a few ms).
        #expect(profile.contains("<th>Detection passes</th><td>7</td>"))
        #expect(profile.contains("227.00 / 240.00 / 251.00") && profile.contains("12.0 / 21") && profile.contains("0.50"))
        #expect(profile.components(separatedBy: "<th>Detection passes</th>").count == 2, "only the run that had passes")
        // The histogram's count axis has ticks (whole frames), its name turned along it.
        let distribution = try #require(
            profile.components(separatedBy: "class=\"plot distribution\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        let ticks = distribution.components(separatedBy: "<text x=\"\(StatsReport.f(StatsReport.plotLeft - 4))\"").dropFirst().map {
            $0.components(separatedBy: ">").dropFirst().first?.prefix { $0 != "<" } ?? ""
        }
        #expect(ticks.count >= 5 && ticks.allSatisfy { Int($0) != nil }, "\(ticks)")
        #expect(distribution.contains("rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">frames</text>"))
        // Only the drop reasons that happened are in the legend.
        #expect(profile.contains("dropped: frame_was_late") && !profile.contains("dropped: corrupt"))
        #expect(!profile.contains("dropped: out_of_buffers") && !profile.contains("dropped: photo_capture"))

        // merge: the inputs by name, as docs/cli.md says, though their presets differ.
        let merged = StatsMerge.merge([a, b], source: "2 inputs")
        let batch = StatsReport.html(for: [merged, a, b], title: "merge", firstIsMerged: true)
        let rate = try #require(
            batch.components(separatedBy: "class=\"plot presets rate\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        #expect(rate.contains(">a.mp4</text>") && rate.contains(">b.mp4</text>") && rate.contains(">merged</text>"), "\(rate)")
        #expect(!rate.contains(">vga640x480</text>"))
        // A batch's stats files keep their passes for merge's report of each input.
        let document = try JSONSerialization.jsonObject(with: Data(StatsJSON.document(a).text.utf8)) as? [String: Any]
        let read = try #require(StatsMerge.snapshot(fromDocument: document ?? [:]))
        #expect(read.detectionPasses == a.detectionPasses, "\(String(describing: read.detectionPasses))")
    }
}
