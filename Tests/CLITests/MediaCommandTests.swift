import Foundation
import FrameTestSupport
import Testing

/// `framekit detect --input` with a video file and a live stream (#16), through the binary.
@Suite("framekit detect on video files and streams", .serialized)
struct MediaCommandTests {
    @Test("detect --input clip.mp4: one JSON line per frame, then the summary; a face in the clip is found")
    func mp4() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg")
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("face.mp4")
        // The astronaut photo as a 3 s H.264 clip: a real face for the detector.
        try FFmpegTool.run([
            "-loop", "1", "-i", Fixtures.astronaut.path, "-t", "3", "-r", "30", "-vf", "scale=640:640,format=yuv420p", "-c:v", "libx264",
            clip.path
        ])
        let run = try BinaryRunner.run("framekit", ["detect", "--input", clip.path])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.jsonLines()
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect(summary["frames_captured"] as? Int == 90 && summary["width"] as? Int == 640)
        let withFace = objects.dropLast().filter { ($0["faces"] as? [Any])?.count == 1 }
        #expect(withFace.count >= 85, "\(withFace.count) of 90 frames with the one face")
    }

    @Test(
        "discovery lists a stream URL as a device: devices --stream URL (and DiscoverySession(streams:)); a refused one is skipped with its reason"
    )
    func streamInDiscovery() throws {
        try #require(FFmpegTool.isInstalled)
        let live = try FFmpegTool.liveStream(seconds: 5)
        defer { live.stop() }
        let url = live.url
        let run = try BinaryRunner.run("framekit", ["devices", "--json", "--stream", url, "--stream", "tcp://127.0.0.1:1"])
        #expect(run.status == 0, "\(run.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let devices = try #require(object["devices"] as? [[String: Any]])
        let stream = try #require(devices.first { $0["id"] as? String == url }, "\(devices.map { $0["id"] ?? "" })")
        #expect(stream["type"] as? String == "stream")
        let format = try #require((stream["formats"] as? [[String: Any]])?.first)
        #expect(format["width"] as? Int == 320 && format["height"] as? Int == 240)
        let skipped = try #require(object["skipped"] as? [[String: Any]])
        #expect(skipped.contains { $0["path"] as? String == "tcp://127.0.0.1:1" && ($0["reason"] as? String ?? "").contains("refused") })
        #expect(try BinaryRunner.run("framekit", ["devices", "--stream", "not a url"]).status == 64)
        // As --input: a URL that would make framekit listen (and wait for any sender) is refused.
        let listening = try BinaryRunner.run("framekit", ["devices", "--stream", "tcp://127.0.0.1:9?listen=1"])
        #expect(listening.status == 64 && listening.stderr.contains("listen"), "\(listening.status) \(listening.stderr)")
    }

    @Test("--start and --duration are on the media timeline: 3 s from 2 s of a 10 s clip is 90 frames, read as fast as they decode")
    func mediaTimeline() throws {
        try #require(FFmpegTool.isInstalled)
        let clip = Fixtures.temporaryFolder().appendingPathComponent("ten.mp4")
        try FFmpegTool.run([
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-t", "10", "-c:v", "libx264", "-pix_fmt", "yuv420p", clip.path
        ])
        let started = Date()
        let run = try BinaryRunner.run(
            "framekit", ["detect", "--input", clip.path, "--start", "2", "--duration", "3", "--detector", "haar"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(run.status == 0, "\(run.stderr)")
        let frames = try run.jsonLines().filter { $0["frame"] != nil }
        let times = frames.compactMap { $0["timestamp"] as? Double }
        #expect(
            frames.count == 90 && (times.first ?? 0) >= 1.99 && (times.last ?? 9) < 5,
            "\(frames.count) frames, \(times.first ?? -1)…\(times.last ?? -1)")
        #expect(elapsed < 3, "3 s of media took \(elapsed) s: the duration was read as wall-clock time")
        // FrameKit's own readers too: 0.5 s of a 30 fps Y4M is 15 frames.
        let y4m = Fixtures.temporaryFolder().appendingPathComponent("d.y4m")
        try Y4MWriter.write(frames: 60, width: 64, height: 48, to: y4m)
        let short = try BinaryRunner.run("framekit", ["detect", "--input", y4m.path, "--duration", "0.5", "--detector", "haar"])
        #expect(try short.jsonLines().filter { $0["frame"] != nil }.count == 15)
    }

    @Test("detect --input tcp://… reads a live stream in real time; a stream that cannot be reached is exit 75 naming it")
    func liveStream() throws {
        try #require(FFmpegTool.isInstalled)
        let stream = try FFmpegTool.liveStream(seconds: 4)
        defer { stream.stop() }
        let run = try BinaryRunner.run("framekit", ["detect", "--input", stream.url, "--duration", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try run.jsonLines().last?["summary"] as? [String: Any])
        #expect((summary["frames_captured"] as? Int ?? 0) >= 40 && summary["source"] as? String == stream.url)
        // A stream that cannot be reached, and one that drops and does not come back, are
        // temporary failures (75): a scheduler may retry. A scheme that is not a stream's is a
        // usage error (64), named with the ones there are.
        let missing = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:1"])
        #expect(missing.status == 75 && missing.stderr.contains("tcp://127.0.0.1:1"), "\(missing.stderr)")
        let scheme = try BinaryRunner.run("framekit", ["detect", "--input", "nosuch://host/x"])
        #expect(scheme.status == 64 && scheme.stderr.contains("rtsp://"), "\(scheme.status) \(scheme.stderr)")
        let short = try FFmpegTool.liveStream(seconds: 1.5)
        defer { short.stop() }
        let dropped = try BinaryRunner.run("framekit", ["detect", "--input", short.url, "--reconnect", "1"], timeout: 60)
        #expect(dropped.status == 75 && dropped.stderr.contains("reconnecting"), "\(dropped.status) \(dropped.stderr)")
        #expect((try dropped.jsonLines().last?["summary"]) != nil, "the summary is printed before the failure")
    }

    @Test(
        "a folder of PNGs (its name with glob characters) is read in name order, every image once, one of another size a frame of its own size"
    )
    func pngFolder() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder().appendingPathComponent("shots [a*b]")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in ["01.png", "02.png", "03.PNG"] {
            _ = try FFmpegTool.run(["-y", "-i", Fixtures.astronaut.path, folder.appendingPathComponent(name).path])
        }
        _ = try FFmpegTool.run([
            "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "1", folder.appendingPathComponent("04.png").path
        ])
        let run = try BinaryRunner.run("framekit", ["detect", "--input", folder.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.jsonLines()
        let frames = lines.filter { $0["frame"] != nil }
        #expect(frames.compactMap { $0["frame"] as? Int } == [0, 1, 2, 3], "\(frames)")
        #expect(frames.prefix(3).allSatisfy { ($0["faces"] as? [Any])?.count == 1 }, "the astronaut in each")
        #expect(frames.map { $0["width"] as? Int } == [512, 512, 512, 160], "\(frames)")
        let summary = try #require(lines.last?["summary"] as? [String: Any])
        #expect(summary["frames_captured"] as? Int == 4 && summary["frames_dropped"] as? Int == 0, "\(summary)")
    }

    @Test(
        "record --output clip.mp4 killed with SIGKILL at seeded moments 0.6-4 s into the recording: the file plays, and loses at most 1 s of video (the fragment under way and the encoder's look-ahead)"
    )
    func killedRecording() throws {
        try #require(FFmpegTool.isInstalled)
        var random = SeededGenerator.fuzzing(default: 17)
        for index in 0..<4 {
            let url = Fixtures.temporaryFolder().appendingPathComponent("killed-\(index).mp4")
            let process = Process()
            process.executableURL = BinaryRunner.productsFolder.appendingPathComponent("framekit")
            process.arguments = ["record", "--output", url.path, "--duration", "30", "--device", "virtual", "--preset", "cif352x288"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The recording starts with its first frame: the reserved (empty) file gets its header.
            let deadline = Date().addingTimeInterval(30)
            while ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0) == 0, Date() < deadline {
                usleep(2000)
            }
            let started = Date()
            Thread.sleep(forTimeInterval: Double.random(in: 0.6...4, using: &random))
            kill(process.processIdentifier, SIGKILL)
            let recorded = Date().timeIntervalSince(started)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let probe = try BinaryRunner.runTool(
                "/usr/bin/ffprobe",
                ["-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", url.path])
            #expect(probe.status == 0 && probe.stderr.isEmpty, "\(probe.stderr.prefix(300))")
            // Timestamps are capture times from the first frame: the last one read is how much
            // of the recording survived. (Key frames alone, every 2 s, lost up to 2.3 s.)
            let last = probe.stdout.split(separator: "\n").compactMap { Double($0) }.max() ?? 0
            #expect(recorded - last <= 1, "killed \(recorded) s in, the file plays to \(last) s")
        }
    }
}
