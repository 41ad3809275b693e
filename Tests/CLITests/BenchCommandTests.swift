import Foundation
import FrameTestSupport
import Testing

/// `framekit bench` as a real process: a baseline saved and compared, a regression's exit
/// status, the noise and tolerance rule, bad baselines and usage errors.
@Suite("framekit bench: the performance gate for a user's CI", .serialized)
struct BenchCommandTests {
    /// A short clip, and the folder it is in (the runs' working directory: inputs by relative name).
    static func clip() throws -> URL {
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("clip.mp4")
        try FFmpegTool.clip(clip, size: "320x240", frames: 20, codec: ["-c:v", "libx264", "-pix_fmt", "yuv420p"])
        return clip
    }

    /// Runs `framekit bench ARGS` in `folder`.
    static func bench(_ arguments: [String], in folder: URL) throws -> BinaryRun {
        let binary = BinaryRunner.productsFolder.appendingPathComponent("framekit").path
        let quoted = ([binary, "bench"] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        return try BinaryRunner.runTool("/bin/sh", ["-c", "cd '\(folder.path)' && exec \(quoted)"], timeout: 300)
    }

    @Test("a baseline saved, then compared: every figure printed, no regression against itself; the JSON keeps each round's summary")
    func saveAndCompare() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = try Self.clip().deletingLastPathComponent()
        let save = try Self.bench(
            ["--input", "clip.mp4", "--rounds", "2", "--save-baseline", "base.json", "--json", "all.json"], in: folder)
        #expect(save.status == 0, "\(save.stderr)")
        #expect(save.stdout.contains("relative speed") && save.stdout.contains("clip.mp4"), "\(save.stdout)")
        let baseline = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("base.json"))) as? [String: Any])
        let entry = try #require((baseline["inputs"] as? [[String: Any]])?.first)
        #expect(entry["input"] as? String == "clip.mp4" && (entry["relative_speed"] as? Double ?? 0) > 0, "\(entry)")
        let all = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("all.json"))) as? [String: Any])
        let rounds = try #require(((all["inputs"] as? [[String: Any]])?.first?["rounds"]) as? [[String: Any]])
        #expect(rounds.count == 2 && rounds.allSatisfy { $0["frames_captured"] as? Int == 20 && $0["drops"] != nil }, "\(rounds)")
        // Against itself, with a tolerance wide enough for any machine's round-to-round change.
        let compare = try Self.bench(["--input", "clip.mp4", "--rounds", "2", "--compare", "base.json", "--tolerance", "3"], in: folder)
        #expect(
            compare.status == 0 && compare.stdout.contains("compare: clip.mp4:") && compare.stdout.contains(": ok"), "\(compare.stdout)")
    }

    @Test("a baseline ten times faster than now is a regression: exit 3, the input named REGRESSION; one within the noise is not")
    func regression() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = try Self.clip().deletingLastPathComponent()
        let save = try Self.bench(["--input", "clip.mp4", "--rounds", "1", "--save-baseline", "base.json"], in: folder)
        try #require(save.status == 0, "\(save.stderr)")
        let url = folder.appendingPathComponent("base.json")
        var baseline = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var entry = try #require((baseline["inputs"] as? [[String: Any]])?.first)
        let speed = try #require(entry["relative_speed"] as? Double)
        entry["relative_speed"] = speed * 10
        baseline["inputs"] = [entry]
        try JSONSerialization.data(withJSONObject: baseline).write(to: url)
        let slower = try Self.bench(["--input", "clip.mp4", "--rounds", "1", "--compare", "base.json"], in: folder)
        #expect(slower.status == 3 && slower.stdout.contains("REGRESSION"), "\(slower.status) \(slower.stdout)")
        // The same slowdown inside the baseline's own noise (a spread of 20x): not evidence.
        entry["noise"] = 20.0
        baseline["inputs"] = [entry]
        try JSONSerialization.data(withJSONObject: baseline).write(to: url)
        let noisy = try Self.bench(["--input", "clip.mp4", "--rounds", "1", "--compare", "base.json"], in: folder)
        #expect(noisy.status == 0 && noisy.stdout.contains(": ok"), "\(noisy.status) \(noisy.stdout)")
    }

    @Test("bad baselines are exit 65 naming the file; options that do not go together are usage errors (64)")
    func refusals() throws {
        let folder = Fixtures.temporaryFolder()
        try Data("{\"inputs\": []}".utf8).write(to: folder.appendingPathComponent("other.json"))
        try Data("{\"framekit_bench_baseline\": 1, \"inputs\": [{\"input\": \"a\", \"relative_speed\": -1, \"noise\": 0}]}".utf8)
            .write(to: folder.appendingPathComponent("forged.json"))
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("photo.jpg"))
        for (name, message) in [
            ("missing.json", "cannot read"), ("other.json", "not a framekit bench baseline"), ("forged.json", "not a bench figure")
        ] {
            let run = try Self.bench(["--input", "photo.jpg", "--compare", name], in: folder)
            #expect(run.status == 65 && run.stderr.contains(message), "\(name): \(run.status) \(run.stderr)")
        }
        for arguments in [
            ["--input", "photo.jpg", "--tolerance", "2"], ["--input", "photo.jpg", "--save-baseline", "a.json", "--compare", "b.json"],
            ["--input", "photo.jpg", "--rounds", "0"],
            // Sources that run at their own rate measure nothing about the pipeline's speed.
            [], ["--device", "virtual"], ["--input", "photo.jpg", "--realtime"]
        ] {
            let run = try Self.bench(arguments, in: folder)
            #expect(run.status == 64, "\(arguments): \(run.status) \(run.stderr)")
        }
    }

    @Test("a gate stopped before its verdict (SIGTERM: a CI timeout) does not pass: exit 75, nothing compared")
    func interruptedGate() throws {
        let folder = Fixtures.temporaryFolder()
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("photo.jpg"))
        try Data("{\"framekit_bench_baseline\": 1, \"inputs\": [{\"input\": \"photo.jpg\", \"relative_speed\": 1, \"noise\": 0}]}".utf8)
            .write(to: folder.appendingPathComponent("base.json"))
        // A hundred rounds take far longer than the two seconds before the signal.
        let run = try BinaryRunner.runInterrupted(
            [
                "bench", "--input", folder.appendingPathComponent("photo.jpg").path, "--rounds", "100", "--compare",
                folder.appendingPathComponent("base.json").path
            ],
            timeout: 2
        ) { _ in false }
        #expect(run.reason == .exit && run.status == 75, "\(run.reason) \(run.status)")
        #expect(!run.stdout.contains("compare:"), "\(run.stdout)")
    }
}
