import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("framekit detect with several cameras")
struct MultiCameraCommandTests {
    @Test("--device A --device B: lines tagged with their source, one summary per source, exact counts, stats for both")
    func twoCameras() throws {
        let stats = Fixtures.temporaryFolder().appendingPathComponent("two-\(UUID().uuidString).json")
        let run = try BinaryRunner.run(
            "framekit",
            [
                "detect", "--device", "virtual", "--device", "virtual:2", "--preset", "vga640x480", "--frames", "20",
                "--stats", stats.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.jsonLines()
        let summaries = lines.compactMap { $0["summary"] as? [String: Any] }
        #expect(summaries.compactMap { $0["source"] as? String } == ["virtual", "virtual:2"])
        // Two passes at once on their lanes, one thread each (InferenceThreads).
        #expect(summaries.allSatisfy { $0["inference_threads"] as? Int == 1 }, "\(summaries)")
        for summary in summaries {
            let source = try #require(summary["source"] as? String)
            let frames = lines.filter { $0["source"] as? String == source && $0["frame"] != nil }
            let (captured, delivered, dropped) = (
                summary["frames_captured"] as? Int ?? -1, summary["frames_delivered"] as? Int ?? -1, summary["frames_dropped"] as? Int ?? -1
            )
            #expect(captured == 20 && captured == delivered + dropped, "\(source): \(summary)")
            #expect(frames.count == delivered, "\(source): \(frames.count) lines, \(delivered) delivered")
        }
        #expect(lines.allSatisfy { $0["summary"] != nil || ["virtual", "virtual:2"].contains($0["source"] as? String ?? "") })
        let document = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any])
        #expect((document["sources"] as? [Any])?.count == 2)
    }

    @Test("several cameras: one device twice, --annotate, or --input with them are usage errors; other commands take one")
    func misuse() throws {
        for arguments in [
            ["detect", "--device", "virtual", "--device", "virtual", "--frames", "1"],
            ["detect", "--device", "virtual", "--device", "virtual:2", "--frames", "1", "--annotate", "/tmp/never.mjpeg"],
            ["photo", "--device", "virtual", "--device", "virtual:2", "--output", "/tmp/never.jpg"],
            ["detect", "--input", "a.y4m", "--input", "a.y4m"], ["detect", "--input", "a.y4m", "--input", "b.y4m", "--device", "virtual"],
            ["detect", "--input", "a.y4m", "--input", "ftp://example.com/b.mp4"], ["record", "--input", "a.y4m", "--input", "b.y4m"],
            ["detect", "--input", "a.y4m", "--input", "b.y4m", "--control", "brightness=1"]
        ] {
            let run = try BinaryRunner.run("framekit", arguments)
            #expect(run.status == 64, "\(arguments): \(run.status) \(run.stderr)")
        }
    }

    @Test("several --input (a fleet of streams or paced files): each on its own thread, lines tagged, one summary each")
    func severalInputs() throws {
        let folder = Fixtures.temporaryFolder("inputs")
        let paths = try (0..<3).map { i -> String in
            let url = folder.appendingPathComponent("clip\(i).y4m")
            try Y4MWriter.write(frames: 12 + 3 * i, width: 64, height: 48, to: url)
            return url.path
        }
        let run = try BinaryRunner.run("framekit", ["detect", "--realtime"] + paths.flatMap { ["--input", $0] })
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.jsonLines()
        let summaries = lines.compactMap { $0["summary"] as? [String: Any] }
        #expect(summaries.compactMap { $0["source"] as? String } == paths)
        #expect(summaries.compactMap { $0["frames_captured"] as? Int } == [12, 15, 18])
        for path in paths { #expect(lines.contains { $0["source"] as? String == path && $0["frame"] != nil }, "\(path)") }
    }

    @Test("SIGTERM with several cameras: every camera's summary is printed and the process exits 0")
    func terminated() throws {
        // Once both cameras' frames are being reported.
        let run = try BinaryRunner.runInterrupted(["detect", "--device", "virtual", "--device", "virtual:2", "--preset", "vga640x480"]) {
            $0.contains("{\"source\": \"virtual\", \"frame\"") && $0.contains("{\"source\": \"virtual:2\", \"frame\"")
        }
        let text = run.stdout
        #expect(run.status == 0)
        let summaries = text.split(separator: "\n").filter { $0.hasPrefix("{\"summary\"") }
        #expect(summaries.count == 2, "\(text.suffix(500))")
    }
}
