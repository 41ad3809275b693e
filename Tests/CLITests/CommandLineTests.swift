import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("framekit, run as a real process")
struct CommandLineTests {
    static let exitCases: [(arguments: [String], expected: Int32)] = [
        (["--version"], 0), (["--help"], 0), (["detect", "--help"], 0), (["devices", "--help"], 0),
        ([], 64), (["bogus"], 64), (["detect", "--bogus"], 64), (["detect", "--frames"], 64), (["detect", "--frames", "zero"], 64),
        (["detect", "--preset", "hd1280x721"], 64), (["detect", "--realtime"], 64),
        (["detect", "--detector", "yolo"], 64), (["detect", "--scale-factor", "1.1"], 64),
        (["detect", "--detector", "haar", "--score-threshold", "0.5"], 64), (["detect", "--score-threshold", "1.5"], 64),
        (["detect", "--max-face", "1", "--min-face", "500"], 64), (["detect", "--mode", "full", "--pass-interval", "2"], 64),
        (["detect", "--input-size", "10"], 64), (["detect", "--frames", "1", "--frames", "2"], 64),
        (["detect", "--realtime", "--realtime"], 64),
        // From a new-user trial: each was accepted (or exited 1, 69 or 75) before it said why.
        (["detect", "--input", ""], 64), (["detect", "--device", "virtual:0"], 64), (["detect", "--device", "virtual:abc"], 64),
        (["detect", "--input", "ftp://example.com/clip.mp4"], 64), (["detect", "--input", "tcp://127.0.0.1:9000?listen=1"], 64),
        (["detect", "--input", "srt://127.0.0.1:9000?mode=listener"], 64), (["detect", "--input", "clip.mp4", "--reconnect", "2"], 64),
        (["detect", "--reconnect", "2"], 64), (["profile", "--presets", "vga640x480,,low"], 64), (["help", "detect"], 0),
        (["preview", "--host", "999.1.1.1"], 64), (["preview", "--host", "::1"], 64),
        (["help", "nosuch"], 64), (["detect", "--mode", "full", "--tiles", "off"], 64), (["detect", "--tiles", "maybe"], 64),
        (["detect", "--mode", "full", "--cpu-budget", "1"], 64), (["detect", "--cpu-budget", "-1"], 64),
        (["detect", "--cpu-budget", "lots"], 64),
        // Two outputs of one file (#52: exit 0, the later one replacing the earlier).
        (["detect", "--stats", "/tmp/fk-same-out", "--report", "/tmp/fk-same-out"], 64),
        (["detect", "--annotate", "/tmp/./fk-same-out.mjpeg", "--stats", "/tmp/fk-same-out.mjpeg"], 64),
        // MJPEG bytes under an .mp4 name (#53: exit 0, a file no player reads).
        (["detect", "--annotate", "/tmp/boxed.mp4"], 64)
    ]

    @Test("help and version exit 0; usage errors exit 64 with one line", arguments: exitCases.indices)
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
        if arguments == ["detect", "--help"] || arguments == ["help", "detect"] {
            #expect(run.stdout.contains("--preset") && run.stdout.contains("--input"))
        }
    }

    @Test("help and the version on a full stdout: exit 74 with a message, as every other output")
    func helpOnFullStdout() throws {
        for arguments in [["--help"], ["--version"], ["detect", "--help"]] {
            let run = try BinaryRunner.runTool(
                "/bin/bash", ["-c", "\(BinaryRunner.productsFolder.path)/framekit \(arguments.joined(separator: " ")) > /dev/full"])
            #expect(run.status == 74 && run.stderr.contains("stdout"), "\(arguments): \(run.status) \(run.stderr)")
        }
    }

    @Test("detect on the virtual camera keeps the JSON-lines contract")
    func detectVirtual() throws {
        let run = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "45"])
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
        // Passes run beside the frames (a paced source): the face is found within the first
        // frames, then held in every frame after.
        let counts = frames.map { ($0["faces"] as? [Any])?.count ?? -1 }
        let first = try #require(counts.firstIndex(of: 1), "no face found in \(counts)")
        #expect(first < 60, "\(counts)") // the first pass (2 s at 30 fps), on a debug build on a loaded machine
        #expect(counts[first...].allSatisfy { $0 == 1 }, "\(counts)")
        for face in frames.compactMap({ ($0["faces"] as? [[String: Any]])?.first }) {
            #expect(Set(face.keys) == ["x", "y", "width", "height", "confidence", "landmarks"])
            let confidence = try #require(face["confidence"] as? Double)
            #expect(confidence > 0.5 && confidence <= 1)
            #expect((face["landmarks"] as? [[Double]])?.count == 5)
        }
        #expect(summary["detector"] as? String == "cnn" && summary["model"] as? String == "centerface.onnx")
        let captured = try #require(summary["frames_captured"] as? Int)
        let delivered = try #require(summary["frames_delivered"] as? Int)
        let dropped = try #require(summary["frames_dropped"] as? Int)
        let drops = try #require(summary["drops"] as? [String: Int])
        #expect(captured == delivered + dropped && dropped == drops.values.reduce(0, +))
        #expect(Set(drops.keys) == ["frame_was_late", "out_of_buffers", "discontinuity", "corrupt", "photo_capture", "processing_failed"])
        for key in ["latency_ms", "processing_ms"] {
            let p = try #require(summary[key] as? [String: Double])
            #expect(p["p50"]! <= p["p95"]! && p["p95"]! <= p["p99"]! && p["p99"]! <= p["max"]! + 0.001)
        }
        #expect(summary["source"] as? String == "virtual" && summary["preset"] as? String == "vga640x480")
        #expect((summary["memory"] as? [String: Any])?["rss_peak_mb"] as? Double ?? 0 > 0)
        // stderr is a pipe, not a terminal: no progress line.
        #expect(!run.stderr.contains("\r"))
    }

    @Test("on a terminal, detect shows a live progress line on stderr, ending on the summary's count of frames, of the --frames asked")
    func progressOnTerminal() throws {
        let binary = BinaryRunner.productsFolder.appendingPathComponent("framekit").path
        // util-linux's `script` gives the process a pseudo-terminal (stdout and stderr both).
        let run = try BinaryRunner.runTool(
            "/usr/bin/script", ["-qec", "\(binary) detect --device virtual --preset vga640x480 --frames 45", "/dev/null"])
        #expect(run.status == 0)
        #expect(run.stdout.contains("\r") && run.stdout.contains("fps") && run.stdout.contains("latency p50"), "\(run.stdout.suffix(300))")
        // The last progress line's count is the summary's (it ran one ahead, from the output's
        // own count, or stayed half a second behind), of the 45 asked for.
        let pieces = run.stdout.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let lastProgress = pieces.last { $0.hasSuffix("ms") && $0.contains(" frames (") }
        let shown = lastProgress.flatMap { Int($0.split(separator: "/").first ?? "") }
        #expect(lastProgress?.contains("/45 frames (100%)") == true, "\(lastProgress ?? "nothing")")
        let summaryLine = try #require(pieces.last { $0.hasPrefix("{\"summary\"") }, "\(run.stdout.suffix(400).debugDescription)")
        let summary = try JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any]
        let captured = (summary?["summary"] as? [String: Any])?["frames_captured"] as? Int
        #expect(shown != nil && shown == captured, "progress says \(lastProgress ?? "nothing"), the summary \(captured ?? -1)")
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

    @Test("a missing or unreadable input is exit 65, a missing device or one that is not a camera 69, each naming the path")
    func runtimeFailures() throws {
        let missing = try BinaryRunner.run("framekit", ["detect", "--input", "/nonexistent/clip.y4m"])
        #expect(missing.status == 65 && missing.stderr.contains("/nonexistent/clip.y4m"))
        let device = try BinaryRunner.run("framekit", ["detect", "--device", "/dev/video97"])
        #expect(device.status == 69 && device.stderr.contains("/dev/video97"))
        let notCamera = try BinaryRunner.run("framekit", ["detect", "--device", "/dev/null"])
        #expect(notCamera.status == 69 && notCamera.stderr.contains("VIDIOC_QUERYCAP"))
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

@Suite("framekit profile, reports and annotation")
struct ProfileAndReportTests {
    @Test("profile runs each preset and reports them in the documented JSON, with an HTML report")
    func profile() throws {
        let folder = Fixtures.temporaryFolder()
        let report = folder.appendingPathComponent("report.html")
        let json = folder.appendingPathComponent("p.json")
        let run = try BinaryRunner.run(
            "framekit",
            [
                "profile", "--presets", "cif352x288,vga640x480", "--duration", "1",
                "--device", "virtual", "--json", json.path, "--report", report.path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try run.jsonLines().first)
        let presets = try #require(object["presets"] as? [[String: Any]])
        #expect(presets.map { $0["preset"] as? String } == ["cif352x288", "vga640x480"])
        for p in presets {
            let captured = p["frames_captured"] as? Int ?? -1
            let delivered = p["frames_delivered"] as? Int ?? -1
            #expect(captured >= 20 && captured == delivered + (p["frames_dropped"] as? Int ?? -1))
            #expect((p["latency_ms"] as? [String: Double])?["p99"] != nil && (p["memory"] as? [String: Any])?["rss_peak_mb"] != nil)
            // "exactly the fields of detect's summary" (docs/cli.md): the detector's too.
            #expect(p["detector"] as? String == "cnn" && p["mode"] as? String == "tracking" && p["model"] != nil, "\(p.keys.sorted())")
        }
        #expect(try Data(contentsOf: json).count > 100)
        let html = try String(contentsOf: report, encoding: .utf8)
        #expect(html.contains("class=\"plot presets rate\"") && html.contains("id=\"preset-vga640x480\""))
        let bad = try BinaryRunner.run("framekit", ["profile", "--presets", "vga640x480,nope"])
        #expect(bad.status == 64 && bad.stderr.contains("nope"))
    }

    @Test("profile: each preset's peak RSS is its own run's, not the process's so far (1080p first, then CIF)")
    func profileMemoryPerPreset() throws {
        let run = try BinaryRunner.run(
            "framekit", ["profile", "--presets", "hd1920x1080,cif352x288", "--duration", "1", "--device", "virtual"])
        #expect(run.status == 0, "\(run.stderr)")
        let presets = try #require(try run.jsonLines().first?["presets"] as? [[String: Any]])
        let peaks = presets.compactMap { ($0["memory"] as? [String: Any])?["rss_peak_mb"] as? Double }
        // Before, both said the process's peak, the 1080p run's: 275.4 / 275.4 MB here. Then
        // ~240 / ~90, but now and then ~240 / ~235, even idle, once failing under load (232.8 /
        // 232.9): the 1080p run's detector, held a few milliseconds past the run's end by the
        // pass lane and the late-pass timer, was freed during the CIF run (docs/stats.md). The
        // check stays that CIF's is its own, below 1080p's.
        try #require(peaks.count == 2)
        #expect(peaks[1] < peaks[0] - 1, "CIF after 1080p: \(peaks)")
    }

    @Test("--detector haar: boxes with no confidence and no landmarks; the summary names it")
    func haarDetector() throws {
        let run = try BinaryRunner.run(
            "framekit",
            [
                "detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "10",
                "--detector", "haar", "--mode", "full"
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.jsonLines()
        let frames = objects.dropLast()
        let faces = frames.compactMap { ($0["faces"] as? [[String: Any]])?.first }
        // Full mode on a paced camera: a busy machine drops frames (newest wins: a CI run once
        // had faces in only 4 of 10 captured frames), never a delivered frame's face (here: 10
        // of 10 delivered, idle and beside two busy loops; 7-8 of 10 beside six, each with its
        // face).
        let dropped = (objects.last?["summary"] as? [String: Any])?["frames_dropped"] ?? "?"
        #expect(!frames.isEmpty && faces.count >= frames.count - 1, "\(faces.count) faces in \(frames.count) frames, \(dropped) dropped")
        for face in faces {
            #expect(face["confidence"] is NSNull)
            #expect((face["landmarks"] as? [Any])?.isEmpty == true)
        }
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect(summary["detector"] as? String == "haar" && summary["mode"] as? String == "full")
        #expect(summary["model"] as? String == "haarcascade_frontalface_default.xml")
    }

    @Test("--annotate writes an MJPEG that framekit reads back, faces boxed; it never overwrites")
    func annotate() throws {
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("annotated.mjpeg")
        // Full mode: every delivered frame has its faces (this test is about the drawing).
        let run = try BinaryRunner.run(
            "framekit",
            [
                "detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "10", "--mode", "full",
                "--annotate", clip.path, "--report", folder.appendingPathComponent("r.html").path
            ])
        #expect(run.status == 0, "\(run.stderr)")
        let delivered = try run.jsonLines().dropLast().count
        let back = try BinaryRunner.run("framekit", ["detect", "--input", clip.path])
        #expect(back.status == 0)
        let summary = try #require(try back.jsonLines().last?["summary"] as? [String: Any])
        #expect(summary["frames_delivered"] as? Int == delivered && (summary["drops"] as? [String: Int])?["corrupt"] == 0)
        // The boxes are in the pictures: green pixels where the first frame's face was.
        let frames = try run.jsonLines()
        let index = try #require(frames.dropLast().firstIndex { ($0["faces"] as? [Any])?.isEmpty == false })
        let face = try #require((frames[index]["faces"] as? [[String: Any]])?.first?.compactMapValues { $0 as? Int })
        let device = try CaptureDevice.file(clip)
        #expect(device.formats[0].size == FrameSize(width: 640, height: 480))
        let jpegs = try jpegFrames(of: clip)
        #expect(jpegs.count == delivered)
        let first = try JPEG.decode(jpegs[index], to: .rgb24)
        let (x, y) = (face["x"]! + face["width"]! / 2, face["y"]! + 1) // middle of the top edge of the box
        let pixel = first.withUnsafeBytes(ofPlane: 0) { b, p in Array(b[(y * p.bytesPerRow + x * 3)..<(y * p.bytesPerRow + x * 3 + 3)]) }
        #expect(pixel[1] > 180 && pixel[0] < 90 && pixel[2] < 90, "pixel \(pixel) at (\(x), \(y))")
        let again = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "2", "--annotate", clip.path])
        #expect(again.status == 73 && again.stderr.contains("exists"))
    }

    @Test("memory stays flat: peak RSS after 1000 frames at 720p within 5% of after 100")
    func memoryIsFlat() throws {
        let folder = Fixtures.temporaryFolder()
        // A 720p MJPEG clip of 1000 frames from the virtual camera's own pictures.
        let source = folder.appendingPathComponent("source.mjpeg")
        let make = try BinaryRunner.run(
            "framekit",
            [
                "detect", "--device", "virtual", "--preset", "hd1280x720", "--frames", "8",
                "--annotate", source.path
            ])
        #expect(make.status == 0, "\(make.stderr)")
        let some = try jpegFrames(of: source)
        try #require(!some.isEmpty)
        var clip = [UInt8]()
        for i in 0..<1010 { clip += some[i % some.count] }
        let file = folder.appendingPathComponent("clip.mjpeg")
        try Data(clip).write(to: file)
        func peak(_ frames: Int) throws -> Double {
            let run = try BinaryRunner.run(
                "framekit", ["detect", "--input", file.path, "--frames", String(frames), "--input-size", "320"],
                timeout: 300)
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try #require(try run.jsonLines().last?["summary"] as? [String: Any])
            #expect(summary["frames_captured"] as? Int ?? 0 >= frames)
            return try #require((summary["memory"] as? [String: Double])?["rss_peak_mb"])
        }
        let after100 = try peak(100)
        let after1000 = try peak(1000)
        #expect(after1000 <= after100 * 1.05, "peak RSS \(after100) MB after 100 frames, \(after1000) MB after 1000")
    }
}

/// The JPEGs of an MJPEG stream, in order.
func jpegFrames(of url: URL) throws -> [[UInt8]] {
    let bytes = try ImageFile.read(url)
    var frames: [[UInt8]] = []
    var start = 0
    var i = 2
    while i + 3 < bytes.count {
        if bytes[i] == 0xFF && bytes[i + 1] == 0xD9 && bytes[i + 2] == 0xFF && bytes[i + 3] == 0xD8 {
            frames.append(Array(bytes[start..<i + 2]))
            start = i + 2
        }
        i += 1
    }
    if start < bytes.count { frames.append(Array(bytes[start...])) }
    return frames
}

@Suite("framekit photo, record and preview")
struct OutputCommandTests {
    @Test("photo writes a JPEG of the preset's size and never overwrites")
    func photo() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("shot.jpg")
        let run = try BinaryRunner.run(
            "framekit", ["photo", "--output", file.path, "--device", "virtual", "--preset", "hd1280x720", "--quality", "80"])
        #expect(run.status == 0, "\(run.stderr)")
        let image = try PixelBuffer(contentsOf: file)
        #expect(image.width == 1280 && image.height == 720)
        let again = try BinaryRunner.run("framekit", ["photo", "--output", file.path, "--device", "virtual"])
        #expect(again.status == 73 && again.stderr.contains("exists"))
        #expect(try BinaryRunner.run("framekit", ["photo"]).status == 64)
    }

    @Test("record writes an AVI that OpenCV reads with the frames and size asked for")
    func record() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.avi")
        let run = try BinaryRunner.run(
            "framekit", ["record", "--output", file.path, "--frames", "12", "--device", "virtual", "--preset", "vga640x480"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try run.jsonLines().first)
        let frames = try #require(summary["frames"] as? Int)
        // Exactly the frames asked for, and the summary says the limit ended it (it said
        // "stop", and a few more frames came in while a loop watched a counter).
        #expect(frames == 12 && (summary["ended_by"] as? String ?? "").contains("frame count (12)"), "\(summary)")
        let probe = try OpenCV.probeVideo(file.path)
        #expect(probe.decodedFrames == frames && probe.width == 640 && probe.height == 480)
        // H.264 too, whose encoder holds frames back: the limit counts the frames it took.
        let mp4 = Fixtures.temporaryFolder().appendingPathComponent("clip.mp4")
        let h264 = try BinaryRunner.run(
            "framekit", ["record", "--output", mp4.path, "--frames", "12", "--device", "virtual", "--preset", "vga640x480"])
        let h264Summary = try #require(try h264.jsonLines().first)
        #expect(h264.status == 0 && h264Summary["frames"] as? Int == 12, "\(h264Summary) \(h264.stderr)")
        #expect(try OpenCV.probeVideo(mp4.path).decodedFrames == 12)
        #expect(try BinaryRunner.run("framekit", ["record", "--output", file.path, "--frames", "3", "--device", "virtual"]).status == 73)
        #expect(try BinaryRunner.run("framekit", ["record", "--output", "x.avi", "--frames", "3", "--duration", "1"]).status == 64)
        let mkv = try BinaryRunner.run("framekit", ["record", "--output", "x.mkv", "--device", "virtual"])
        #expect(mkv.status == 64 && mkv.stderr.contains(".mp4"), "a container it does not write is a usage error, before capture")
    }

    @Test(
        "record --duration 3 at 1080p (frames dropped on a busy machine or not): ffprobe's duration is 3.0 ± 0.1 s, as ended_by says",
        arguments: ["mp4", "avi"])
    func recordDurationMatchesFile(container: String) throws {
        try #require(FFmpegTool.isInstalled)
        let file = Fixtures.temporaryFolder().appendingPathComponent("three.\(container)")
        let run = try BinaryRunner.run(
            "framekit", ["record", "--output", file.path, "--duration", "3", "--device", "virtual", "--preset", "hd1920x1080"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try run.jsonLines().first)
        #expect((summary["ended_by"] as? String ?? "").contains("3.0 s"), "\(summary)")
        let seconds = try FFmpegTool.probe(file).duration
        // A recording played back lasts as long as it recorded (a 2 s 1080p .mov with 38 frames
        // dropped once played in 0.77 s).
        #expect(
            abs(seconds - 3) <= 0.1, "ffprobe: \(seconds) s; \(summary["frames"] ?? 0) frames, \(summary["frames_dropped"] ?? 0) dropped")
    }

    @Test(
        "record --max-size: the file never passes it; one below the headers and a frame (1024: an empty AVI is 5.7 KB) leaves no file and says so",
        arguments: ["avi", "mp4"])
    func recordMaxSize(container: String) throws {
        let folder = Fixtures.temporaryFolder()
        for limit in [1024, 200_000] {
            let file = folder.appendingPathComponent("limit-\(limit).\(container)")
            let run = try BinaryRunner.run(
                "framekit",
                [
                    "record", "--output", file.path, "--max-size", "\(limit)", "--duration", "20", "--device", "virtual", "--preset",
                    "vga640x480"
                ])
            #expect(run.status == 0, "\(run.stderr)")
            let summary = try #require(try run.jsonLines().first)
            let frames = try #require(summary["frames"] as? Int)
            #expect((summary["ended_by"] as? String ?? "").contains("file size"), "\(summary)")
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? nil
            if limit == 1024 {
                // It wrote 5,686 bytes of AVI headers (no frame) past a limit of 1,024.
                #expect(frames == 0 && size == nil && summary["recording"] is NSNull, "\(summary), file of \(size ?? 0) bytes")
            } else {
                #expect(
                    frames > 0 && (size ?? .max) <= limit && summary["recording"] as? String == file.path, "\(summary), \(size ?? -1) bytes"
                )
            }
        }
    }

    @Test("record with no limit records until Ctrl-C: exit 0, ended by stop, the file complete", arguments: [SIGINT, SIGTERM])
    func recordUntilInterrupted(signal: Int32) throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("open-ended.mp4")
        let process = Process()
        process.executableURL = BinaryRunner.productsFolder.appendingPathComponent("framekit")
        process.arguments = ["record", "--output", file.path, "--device", "virtual", "--preset", "cif352x288"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Interrupted once the file holds more than its header (frames are being written).
        let deadline = Date().addingTimeInterval(60)
        func size() -> Int { (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0 }
        while size() < 20_000 && process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(process.terminationStatus) \(text)")
        let summary = try #require(
            text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }.first)
        let frames = try #require(summary["frames"] as? Int)
        #expect(summary["ended_by"] as? String == "stop" && frames > 0, "\(summary)")
        let probe = try OpenCV.probeVideo(file.path)
        #expect(probe.decodedFrames == frames && probe.width == 352, "\(probe)")
    }

    @Test("preview: a real headless Chromium opens the page and its screenshot shows the video")
    func previewInChromium() throws {
        let chromium = "/usr/bin/chromium"
        try #require(FileManager.default.isExecutableFile(atPath: chromium), "Debian's chromium is needed (scripts/bootstrap installs it)")
        // Served until the test stops it (a 20 s --duration ended before a Chromium slowed to
        // ~100 s by D-Bus timeouts on a loaded CI machine loaded the page: connection refused).
        let preview = try RunningPreview.start(
            ["preview", "--port", "0", "--duration", "300", "--device", "virtual", "--preset", "vga640x480"])
        defer { preview.stop() }
        let port = preview.port
        // The live stats: frames delivered, and the session's buffer pool (it read 0 before).
        // They are published with frames, twice a second: read until they carry the pool.
        var stats = try RawHTTP.request(port: port, "GET", "/stats.json")
        var object: [String: Any]? = nil
        _ = eventually {
            stats = (try? RawHTTP.request(port: port, "GET", "/stats.json")) ?? stats
            object = (try? JSONSerialization.jsonObject(with: Data(stats.body))) as? [String: Any]
            return ((object?["memory"] as? [String: Any])?["pool_peak_bytes"] as? Int ?? 0) > 0
        }
        let memory = try #require(object?["memory"] as? [String: Any], "\(String(decoding: stats.body, as: UTF8.self))")
        #expect((memory["pool_peak_bytes"] as? Int ?? 0) > 0, "\(memory)")
        let shot = Fixtures.temporaryFolder().appendingPathComponent("preview.jpeg")
        let browser = try BinaryRunner.runTool(
            chromium,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                "--window-size=900,700", "--virtual-time-budget=3000",
                "--screenshot=\(shot.path)", "http://127.0.0.1:\(port)/"
            ])
        #expect(FileManager.default.fileExists(atPath: shot.path), "chromium: \(browser.stderr.suffix(300))")
        let screenshot = try JPEG.decode(ImageFile.read(shot), to: .rgb24)
        // The page is near-black (#111) but for the video: count strongly coloured pixels in
        // the area where the 640x480 video sits (colour bars and the face).
        var saturated = 0
        var total = 0
        screenshot.withUnsafeBytes(ofPlane: 0) { b, p in
            for y in stride(from: 80, to: min(540, screenshot.height), by: 4) {
                for x in stride(from: 20, to: min(650, screenshot.width), by: 4) {
                    let o = y * p.bytesPerRow + x * 3
                    let (r, g, bl) = (Int(b[o]), Int(b[o + 1]), Int(b[o + 2]))
                    if max(r, g, bl) - min(r, g, bl) > 100 { saturated += 1 }
                    total += 1
                }
            }
        }
        #expect(Double(saturated) / Double(total) > 0.3, "\(saturated) of \(total) sampled pixels are coloured")
    }
}
