import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// Weeks of frames in seconds, and figures no honest run has: the stats never trap on them.
@Suite("Stats: long runs and hostile figures")
struct HostileStatsTests {
    @Test("ten million drops (all dropped, the worst case for the timeline's strides) and 10^7 results: bounded, no trap")
    func weeksOfDrops() throws {
        let recorder = StatsRecorder()
        for n in 0..<10_000_000 {
            recorder.recordDrop(DroppedFrame(sequenceNumber: UInt64(n), presentationTime: Double(n) / 30, reason: .frameWasLate))
        }
        var s = recorder.snapshot(preset: "p", width: 2, height: 2, source: "t", counts: OutputCounts())
        #expect(s.timeline.count <= StatsRecorder.timelineCapacity && s.timeline.count >= StatsRecorder.timelineCapacity / 4)
        #expect((s.timeline.last?.sequence ?? 0) >= 9_990_000, "the plot reaches the end of the run")
        // Then results at 10% drops: the result stride grows too, and the plot still spans the run.
        let start = Timestamp.now()
        let frame = SampleBuffer(
            pixelBuffer: try PixelBuffer(width: 2, height: 2, format: .gray8), presentationTime: 0, sequenceNumber: 0,
            captureInstant: start)
        for n in 10_000_000..<12_000_000 {
            if n % 10 == 0 {
                recorder.recordDrop(DroppedFrame(sequenceNumber: UInt64(n), presentationTime: 0, reason: .discontinuity))
            } else {
                var f = frame
                f.sequenceNumber = UInt64(n)
                recorder.recordResult(of: f, resultAt: start.adding(seconds: 0.01))
            }
        }
        s = recorder.snapshot(preset: "p", width: 2, height: 2, source: "t", counts: OutputCounts())
        #expect(s.timeline.count <= StatsRecorder.timelineCapacity)
        #expect(s.timeline.contains { $0.dropReason == nil } && (s.timeline.last?.sequence ?? 0) >= 11_990_000)
        #expect((s.timeline.first?.sequence ?? .max) < 10_000)
    }

    @Test("times past the clock's range saturate: no trap for 2^62 s, infinity or NaN")
    func timestampsSaturate() {
        #expect(Timestamp(seconds: 4.6e18).nanoseconds == .max)
        #expect(Timestamp(seconds: .infinity).nanoseconds == .max)
        #expect(Timestamp(seconds: .nan).nanoseconds == 0 && Timestamp(seconds: -5).nanoseconds == 0)
        #expect(Timestamp.now().adding(seconds: Double(1 << 62)).nanoseconds == .max)
        #expect(Timestamp(nanoseconds: 10).adding(seconds: -1e300).nanoseconds == 0)
        #expect(Timestamp(nanoseconds: 1_000_000_000).adding(seconds: 1.5).nanoseconds == 2_500_000_000)
    }

    /// A stats document as `framekit detect --stats` writes it, with `change` applied.
    func document(_ change: (inout [String: Any]) -> Void = { _ in }) -> [String: Any] {
        var d: [String: Any] = [
            "preset": "hd1280x720", "width": 1280, "height": 720, "source": "a.mp4",
            "frames_captured": 100, "frames_delivered": 90, "frames_dropped": 10, "drops": ["frame_was_late": 10], "fps": 29.5,
            "latency_ms": ["p50": 20.0, "p95": 30.0, "p99": 40.0, "max": 50.0],
            "processing_ms": ["p50": 10.0, "p95": 12.0, "p99": 14.0, "max": 15.0],
            "memory": ["rss_peak_mb": 100.0, "rss_current_mb": 90.0, "pool_peak_bytes": 5_000_000],
            "latency_histogram": [["low_ms": 19.9, "high_ms": 20.2, "count": 90]],
            "processing_histogram": [["low_ms": 9.9, "high_ms": 10.1, "count": 90]]
        ]
        change(&d)
        // Through JSON text and back, as merge reads a file.
        let text = try! JSONSerialization.data(withJSONObject: d)
        return try! JSONSerialization.jsonObject(with: text) as! [String: Any]
    }

    @Test("merge lists a forged stats file as unreadable: negative, huge, fractional or non-finite figures, counts that do not add up")
    func forgedStatsFiles() throws {
        #expect(StatsMerge.snapshot(fromDocument: document()) != nil, "the honest document is read")
        let forgeries: [(String, (inout [String: Any]) -> Void)] = [
            ("bucket low_ms -5", { $0["latency_histogram"] = [["low_ms": -5, "high_ms": 1, "count": 90]] }),
            ("bucket low_ms 1e300", { $0["latency_histogram"] = [["low_ms": 1e300, "high_ms": 1e300, "count": 90]] }),
            ("latency max 1e30", { $0["latency_ms"] = ["p50": 1.0, "p95": 1.0, "p99": 1.0, "max": 1e30] }),
            ("count 2^63-1", { $0["processing_histogram"] = [["low_ms": 1, "high_ms": 2, "count": Int.max]] }),
            ("frames_delivered Int.min", { $0["frames_delivered"] = Int.min }),
            ("frames_captured 1e30", { $0["frames_captured"] = 1e30 }),
            ("frames_captured 2.5", { $0["frames_captured"] = 2.5 }),
            ("frames that do not add up", { $0["frames_dropped"] = 11 }),
            ("a drop count of -1", { $0["drops"] = ["corrupt": -1] }),
            ("width 1e20", { $0["width"] = 1e20 })
        ]
        for (name, forge) in forgeries {
            #expect(StatsMerge.snapshot(fromDocument: document(forge)) == nil, "\(name) was read as a stats document")
        }
    }

    @Test(
        "the recorder fuzzed: 200,000 seeded results and drops with hostile numbers, times and counts (0 to 2^64 ns, NaN, ∞, sequence numbers that jump and run back) never trap; every figure it writes is a number JSON can hold"
    )
    func recorderFuzzed() throws {
        var random = SeededGenerator.fuzzing(default: 0x5EC0_4DE5)
        let recorder = StatsRecorder()
        let frame = SampleBuffer(
            pixelBuffer: try PixelBuffer(width: 2, height: 2, format: .gray8), presentationTime: 0, sequenceNumber: 0,
            captureInstant: .now())
        let nanoseconds: [UInt64] = [0, 1, .max, .max - 1, 1 << 62, 1 << 63]
        let seconds: [Double] = [.nan, .infinity, -.infinity, 1e308, -1e308, 0, 4.6e18, 1e-300]
        var sequence: UInt64 = 0
        func instant() -> Timestamp {
            Bool.random(using: &random)
                ? Timestamp(nanoseconds: nanoseconds.randomElement(using: &random)!)
                : Timestamp(nanoseconds: UInt64.random(in: 0...(1 << 50), using: &random))
        }
        for step in 0..<200_000 {
            switch UInt8.random(in: 0..<8, using: &random) {
            case 0: sequence = UInt64.random(in: 0...UInt64.max, using: &random) // a jump, anywhere
            case 1: sequence = sequence &- UInt64.random(in: 0...1000, using: &random) // backwards
            default: sequence &+= 1
            }
            if Bool.random(using: &random) {
                var f = frame
                f.sequenceNumber = sequence
                f.captureInstant = instant()
                f.dequeueInstant = instant()
                f.presentationTime = seconds.randomElement(using: &random)!
                recorder.recordResult(of: f, resultAt: instant())
            } else {
                let reason = DropReason.allCases.randomElement(using: &random)!
                recorder.recordDrop(
                    DroppedFrame(sequenceNumber: sequence, presentationTime: seconds.randomElement(using: &random)!, reason: reason))
            }
            if step % 20_000 == 0 {
                recorder.sampleMemory(poolBytesInUse: [Int.max, Int.min, 0, nil].randomElement(using: &random)!)
                var counts = OutputCounts()
                counts.captured = [Int.max, Int.min, 0, step].randomElement(using: &random)!
                counts.delivered = [Int.max, Int.min, 0, step].randomElement(using: &random)!
                counts.dropped = [.frameWasLate: [Int.max, Int.min, 1].randomElement(using: &random)!, .corrupt: Int.max]
                let snapshot = recorder.snapshot(preset: "p", width: 2, height: 2, source: "fuzz", counts: counts)
                let text = StatsJSON.document(snapshot).text
                #expect(!text.contains("nan") && !text.contains("inf"), "\(text.prefix(300))")
                #expect(throws: Never.self, "the document parses") { try JSONSerialization.jsonObject(with: Data(text.utf8)) }
                _ = StatsReport.html(for: [snapshot], title: "fuzz")
                let frozen = counts
                _ = PrometheusText.render([MetricsSource(name: "fuzz", stats: recorder, counts: { frozen })])
            }
        }
    }

    @Test("merge fuzzed: 5,000 seeded stats documents with hostile values and mangled bytes are read or refused, never trap")
    func mergeFuzzed() throws {
        var random = SeededGenerator.fuzzing(default: 0x57A75)
        let hostile: [Any] = [
            Int.max, Int.min, -1, 0, 1 << 53, 1e308, -1e308, 2.5, 1e-300, "x", "", [Any](), [String: Any](), NSNull(), true,
            [["low_ms": 1e308, "high_ms": -1, "count": Int.max]], ["p50": Int.min, "max": 1e308], ["corrupt": Int.max, "x": -1]
        ]
        let keys = Array(document().keys)
        let honest = try JSONSerialization.data(withJSONObject: document())
        var read = 0
        for i in 0..<5_000 {
            let snapshot: StatsSnapshot?
            if i % 2 == 0 {
                // Values: one to four fields replaced by hostile ones (nested ones too).
                var d = document()
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let key = keys.randomElement(using: &random)!
                    if var nested = d[key] as? [String: Any], let inner = nested.keys.randomElement(using: &random),
                        Bool.random(using: &random)
                    {
                        nested[inner] = hostile.randomElement(using: &random)!
                        d[key] = nested
                    } else {
                        d[key] = hostile.randomElement(using: &random)!
                    }
                }
                snapshot = StatsMerge.snapshot(fromDocument: d)
            } else {
                // Bytes: the JSON text mangled, then whatever still parses.
                var bytes = [UInt8](honest)
                for _ in 0..<Int.random(in: 1...6, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0x20...0x7E, using: &random)
                }
                guard let d = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { continue }
                snapshot = StatsMerge.snapshot(fromDocument: d)
            }
            guard let snapshot else { continue }
            read += 1
            // What is read merges and renders without a trap, and its figures stay sane.
            let merged = StatsMerge.merge([snapshot, snapshot, snapshot], source: "all")
            #expect(merged.framesCaptured >= 0 && merged.framesDelivered >= 0 && merged.framesDropped >= 0, "\(i)")
            _ = StatsJSON.document(merged).text
        }
        #expect(read > 100 && read < 5_000, "read \(read) of 5,000: the fuzz reached both outcomes")
    }

    @Test("merging the largest counts a file may hold saturates, never traps or turns negative")
    func mergeSaturates() throws {
        let huge = 1 << 50
        let one = try #require(
            StatsMerge.snapshot(
                fromDocument: document {
                    $0["frames_captured"] = huge
                    $0["frames_delivered"] = huge
                    $0["frames_dropped"] = 0
                    $0["drops"] = ["frame_was_late": huge]
                    $0["latency_histogram"] = [["low_ms": 1.0, "high_ms": 1.1, "count": huge]]
                }))
        let merged = StatsMerge.merge(Array(repeating: one, count: 10_000), source: "all")
        #expect(merged.framesCaptured == .max && merged.framesDelivered == .max && merged.drops["frame_was_late"] == .max)
        #expect(merged.latencyMilliseconds.p50 > 0 && merged.latencyMilliseconds.p50 < 2)
        _ = StatsJSON.document(merged).text
    }
}
