import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("framekit, run as a real process")
struct CommandLineTests {
    static let exitCases: [(arguments: [String], expected: Int32)] = [
        (["--version"], 0), (["--help"], 0), (["detect", "--help"], 0), (["devices", "--help"], 0),
        ([], 64), (["bogus"], 64), (["detect", "--bogus"], 64), (["detect", "--frames"], 64), (["detect", "--frames", "zero"], 64),
        (["detect", "--preset", "hd1280x721"], 64), (["detect", "--realtime"], 64),
    ]

    @Test("help and version exit 0; usage errors exit 64 with one line", arguments: 0..<11)
    func exitCodes(index: Int) throws {
        let (arguments, expected) = Self.exitCases[index]
        let run = try BinaryRunner.run("framekit", arguments)
        #expect(run.status == expected, "\(arguments): \(run.stderr)")
        if expected == 64 {
            #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
        if arguments == ["detect", "--preset", "hd1280x721"] {
            #expect(run.stderr.contains("hd1280x720") && run.stderr.contains("vga640x480"))
        }
        if arguments == ["detect", "--help"] { #expect(run.stdout.contains("--preset") && run.stdout.contains("--input")) }
    }

    @Test("detect on the virtual camera keeps the JSON-lines contract")
    func detectVirtual() throws {
        let run = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "20"])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.jsonLines()
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        let frames = objects.dropLast()
        #expect(!frames.isEmpty)
        for frame in frames {
            #expect(Set(frame.keys) == ["frame", "timestamp", "width", "height", "faces", "latency_ms"])
            #expect(frame["width"] as? Int == 640 && frame["height"] as? Int == 480)
        }
        let indices = frames.compactMap { $0["frame"] as? Int }
        #expect(indices == indices.sorted() && Set(indices).count == indices.count)
        #expect(frames.filter { ($0["faces"] as? [Any])?.count == 1 }.count >= frames.count * 8 / 10)
        let captured = try #require(summary["frames_captured"] as? Int)
        let delivered = try #require(summary["frames_delivered"] as? Int)
        let dropped = try #require(summary["frames_dropped"] as? Int)
        let drops = try #require(summary["drops"] as? [String: Int])
        #expect(captured == delivered + dropped && dropped == drops.values.reduce(0, +))
        #expect(Set(drops.keys) == ["frame_was_late", "out_of_buffers", "discontinuity", "corrupt"])
        for key in ["latency_ms", "processing_ms"] {
            let p = try #require(summary[key] as? [String: Double])
            #expect(p["p50"]! <= p["p95"]! && p["p95"]! <= p["p99"]! && p["p99"]! <= p["max"]! + 0.001)
        }
        #expect(summary["source"] as? String == "virtual" && summary["preset"] as? String == "vga640x480")
        #expect((summary["memory"] as? [String: Any])?["rss_peak_mb"] as? Double ?? 0 > 0)
        // stderr is a pipe, not a terminal: no progress line.
        #expect(!run.stderr.contains("\r"))
    }

    @Test("detect on a file processes every frame; corrupt frames are counted, not fatal")
    func detectFile() throws {
        let folder = Fixtures.temporaryFolder()
        let good = try ImageFile.read(Fixtures.astronaut)
        let file = folder.appendingPathComponent("clip.mjpeg")
        try Data(good + good + Array(good.prefix(4000)) + [0xFF, 0xD9] + good).write(to: file)
        let stats = folder.appendingPathComponent("stats.json")
        let run = try BinaryRunner.run("framekit", ["detect", "--input", file.path, "--stats", stats.path])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.jsonLines()
        #expect(objects.count == 4)
        #expect(objects.dropLast().compactMap { $0["frame"] as? Int } == [0, 1, 3])
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect((summary["drops"] as? [String: Int])?["corrupt"] == 1)
        #expect(summary["width"] as? Int == 512)
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any]
        #expect(saved?["frames_captured"] as? Int == 4)
    }

    @Test("a missing input or device is a runtime failure (exit 1) with the path named")
    func runtimeFailures() throws {
        let missing = try BinaryRunner.run("framekit", ["detect", "--input", "/nonexistent/clip.y4m"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent/clip.y4m"))
        let device = try BinaryRunner.run("framekit", ["detect", "--device", "/dev/video97"])
        #expect(device.status == 1 && device.stderr.contains("/dev/video97"))
        let notCamera = try BinaryRunner.run("framekit", ["detect", "--device", "/dev/null"])
        #expect(notCamera.status == 1 && notCamera.stderr.contains("VIDIOC_QUERYCAP"))
    }

    @Test("devices lists the virtual camera with its presets, as text and JSON")
    func devices() throws {
        let run = try BinaryRunner.run("framekit", ["devices", "--json"])
        #expect(run.status == 0)
        let object = try #require(try run.jsonLines().first)
        let devices = try #require(object["devices"] as? [[String: Any]])
        let virtual = try #require(devices.first { $0["id"] as? String == "virtual" })
        #expect((virtual["presets"] as? [String])?.contains("hd1280x720") == true)
        #expect((virtual["formats"] as? [Any])?.count == 8)
        let text = try BinaryRunner.run("framekit", ["devices"])
        #expect(text.stdout.contains("FrameKit Virtual Camera"))
    }
}
