import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

@Suite("framekit detect --inputs (batch shards) and framekit merge")
struct BatchCommandTests {
    /// A folder of `count` small Y4M clips (`frames` frames each).
    func clips(_ count: Int, frames: Int = 6) throws -> URL {
        let folder = Fixtures.temporaryFolder("batch")
        for i in 0..<count {
            try Y4MWriter.write(frames: frames, width: 64, height: 48, to: folder.appendingPathComponent(String(format: "clip%02d.y4m", i)))
        }
        return folder
    }

    func outputs(_ folder: URL) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() }

    @Test(
        "a folder of photos given to --inputs: each photo an input of one frame, its faces in its own lines (it said the folder had no inputs)"
    )
    func photoFolder() throws {
        let inputs = Fixtures.temporaryFolder("batch-photos")
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: inputs.appendingPathComponent("a.jpg"))
        try FileManager.default.copyItem(at: Fixtures.coffee, to: inputs.appendingPathComponent("b.jpg"))
        try Data("notes".utf8).write(to: inputs.appendingPathComponent("readme.txt"))
        let out = Fixtures.temporaryFolder("batch-photos-out")
        let run = try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path])
        #expect(run.status == 0, "\(run.stderr)")
        let batch = try #require(try run.jsonLines().last?["batch"] as? [String: Any])
        #expect(batch["done"] as? Int == 2, "\(batch)")
        let astronaut = try String(contentsOf: out.appendingPathComponent("a.jpg.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(astronaut.count == 1 && astronaut[0].contains("\"faces\": [{"), "\(astronaut)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("b.jpg.stats.json").path))
    }

    @Test("three shards cover every input exactly once; a rerun skips what is done; merge sums and merges the histograms")
    func shardsAndMerge() throws {
        let inputs = try clips(7)
        let out = Fixtures.temporaryFolder("batch-out").appendingPathComponent("results")
        for shard in 0..<3 {
            let run = try BinaryRunner.run(
                "framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--shard", "\(shard)/3", "--detector", "haar"])
            #expect(run.status == 0, "\(run.stderr)")
            let batch = try #require(try run.jsonLines().last?["batch"] as? [String: Any])
            #expect(batch["done"] as? Int == (shard == 0 ? 3 : 2), "\(batch)")
        }
        let files = outputs(out)
        #expect(files.filter { $0.hasSuffix(".stats.json") }.count == 7 && files.filter { $0.hasSuffix(".jsonl") }.count == 7, "\(files)")
        #expect(!files.contains { $0.hasPrefix(".") }, "temporary files left: \(files)")
        let lines = try String(contentsOf: out.appendingPathComponent("clip03.y4m.jsonl"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 6)
        // Idempotent: a rerun of a shard does nothing again.
        let again = try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--shard", "1/3"])
        let batch = try #require(try again.jsonLines().last?["batch"] as? [String: Any])
        #expect(again.status == 0 && batch["skipped"] as? Int == 2 && batch["done"] as? Int == 0, "\(batch)")
        // The merge: every input's frames, percentiles from the merged distribution.
        let merge = try BinaryRunner.run("framekit", ["merge", out.path, "--report", out.appendingPathComponent("../report.html").path])
        #expect(merge.status == 0, "\(merge.stderr)")
        let merged = try #require(try merge.jsonLines().first?["merged"] as? [String: Any])
        #expect(merged["inputs_done"] as? Int == 7 && merged["frames_captured"] as? Int == 42 && merged["inputs_failed"] as? Int == 0)
        // Only what adds up: one size (all 64x48), the files' own preset, no stages or current RSS.
        #expect(merged["width"] as? Int == 64 && merged["height"] as? Int == 48 && merged["preset"] as? String == "64x48", "\(merged)")
        #expect(merged["stages"] == nil && (merged["memory"] as? [String: Any])?["rss_current_mb"] == nil, "\(merged)")
        let html = try String(contentsOf: out.appendingPathComponent("../report.html"), encoding: .utf8)
        #expect(html.contains("7 run(s)") && html.contains(">merged<") && html.contains(">clip03.y4m<"), "the runs are labelled by input")
        #expect(!html.contains("0.00 / 0.00") && html.contains("not kept across inputs"))
        let perInput = try files.filter { $0.hasSuffix(".stats.json") }.map { name in
            try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent(name))) as? [String: Any])
        }
        let maxima = perInput.compactMap { ($0["latency_ms"] as? [String: Any])?["max"] as? Double }
        let latency = try #require(merged["latency_ms"] as? [String: Any])
        #expect(latency["max"] as? Double == maxima.max())
        let p50 = try #require(latency["p50"] as? Double)
        let p50s = perInput.compactMap { ($0["latency_ms"] as? [String: Any])?["p50"] as? Double }
        #expect(p50 >= p50s.min()! * 0.98 && p50 <= p50s.max()! * 1.02, "merged p50 \(p50) outside the inputs' \(p50s)")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("../report.html").path))
    }

    @Test("the shard comes from Slurm's or Kubernetes' index when --shard is not given")
    func schedulerIndex() throws {
        let inputs = try clips(5, frames: 2)
        let out = Fixtures.temporaryFolder("batch-env")
        var environment = ProcessInfo.processInfo.environment
        environment["SLURM_ARRAY_TASK_ID"] = "1"
        environment["SLURM_ARRAY_TASK_COUNT"] = "2"
        let slurm = try BinaryRunner.run(
            "framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path], environment: environment)
        #expect(try slurm.jsonLines().last?["batch"] as? [String: Any] != nil)
        #expect(outputs(out).filter { $0.hasSuffix(".stats.json") } == ["clip01.y4m.stats.json", "clip03.y4m.stats.json"])
        // An array with a step (--array=0-8:4: IDs 0, 4, 8): ID 4 is shard 1 of 3 (was refused, 64).
        let stepped = Fixtures.temporaryFolder("batch-step")
        var step = environment
        (step["SLURM_ARRAY_TASK_ID"], step["SLURM_ARRAY_TASK_COUNT"], step["SLURM_ARRAY_TASK_STEP"]) = ("4", "3", "4")
        let stepRun = try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", stepped.path], environment: step)
        #expect(stepRun.status == 0, "\(stepRun.stderr)")
        #expect(outputs(stepped).filter { $0.hasSuffix(".stats.json") } == ["clip01.y4m.stats.json", "clip04.y4m.stats.json"])
        step["SLURM_ARRAY_TASK_ID"] = "5" // not on the step
        #expect(
            try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", stepped.path], environment: step).status
                == 64)
        environment["SLURM_ARRAY_TASK_ID"] = nil
        environment["JOB_COMPLETION_INDEX"] = "2"
        let noCount = try BinaryRunner.run(
            "framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path], environment: environment)
        #expect(noCount.status == 64 && noCount.stderr.contains("--shard-count"))
        let k8s = try BinaryRunner.run(
            "framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--shard-count", "3"], environment: environment)
        #expect(k8s.status == 0 && outputs(out).contains("clip02.y4m.stats.json"), "\(k8s.stderr)")
        // --shard-count without the index: every pod would run the whole list.
        environment["JOB_COMPLETION_INDEX"] = nil
        let noIndex = try BinaryRunner.run(
            "framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--shard-count", "3"], environment: environment)
        #expect(noIndex.status == 64 && noIndex.stderr.contains("JOB_COMPLETION_INDEX"), "\(noIndex.status) \(noIndex.stderr)")
        for bad in ["3/3", "1", "-1/2", "a/b"] {
            #expect(
                try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--shard", bad]).status == 64
            )
        }
        #expect(try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path]).status == 64)
        #expect(try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--shard", "0/2"]).status == 64)
    }

    @Test("a failing input does not stop the batch: recorded with its exit code (75 for an unreachable stream), listed by merge")
    func failures() throws {
        let inputs = try clips(2, frames: 2)
        let list = inputs.appendingPathComponent("list.txt")
        try "clip00.y4m\nmissing.mp4\ntcp://127.0.0.1:1\nclip01.y4m\n".write(to: list, atomically: true, encoding: .utf8)
        let out = Fixtures.temporaryFolder("batch-fail")
        let run = try BinaryRunner.run("framekit", ["detect", "--inputs", list.path, "--output-dir", out.path])
        #expect(run.status == 75, "\(run.status) \(run.stderr)")
        let statuses = try run.jsonLines().compactMap { line -> String? in
            guard let input = line["input"] as? String else { return nil }
            return
                "\(URL(fileURLWithPath: input).lastPathComponent):\(line["status"] as? String ?? "")\(line["exit_code"].map { ":\($0)" } ?? "")"
        }
        #expect(statuses == ["clip00.y4m:done", "missing.mp4:failed:65", "127.0.0.1:1:failed:75", "clip01.y4m:done"], "\(statuses)")
        let report = out.appendingPathComponent("../failures.html")
        let merge = try BinaryRunner.run("framekit", ["merge", out.path, "--report", report.path])
        let merged = try #require(try merge.jsonLines().first?["merged"] as? [String: Any])
        let failures = try #require(merged["failures"] as? [[String: Any]])
        #expect(merged["inputs_done"] as? Int == 2 && failures.compactMap { $0["exit_code"] as? Int }.sorted() == [65, 75])
        // The report lists the failed inputs too (it left them out).
        let html = try String(contentsOf: report, encoding: .utf8)
        #expect(html.contains("Failed inputs") && html.contains("missing.mp4") && html.contains("2 failed"), "\(html.prefix(800))")
    }

    @Test(
        "a list line that is no video — a FIFO (path or file://), a device node, text, a scheme --input refuses, a URL that would listen — fails 65 at once; the batch goes on"
    )
    func linesThatAreNotVideo() throws {
        let inputs = try clips(1, frames: 2)
        let fifo = inputs.appendingPathComponent("fifo.mp4")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        try "not a video\n".write(to: inputs.appendingPathComponent("notes.mp4"), atomically: true, encoding: .utf8)
        let list = inputs.appendingPathComponent("list.txt")
        let lines = [
            fifo.path, "file://\(fifo.path)", "/dev/zero", "file://\(inputs.path)/notes.mp4", "ftp://127.0.0.1/a.mp4",
            "tcp://127.0.0.1:9?listen=1", "clip00.y4m"
        ]
        try (lines.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        let out = Fixtures.temporaryFolder("batch-notvideo")
        // Before, the FIFO blocked in open() for ever: the runner's timeout is the failure.
        let run = try BinaryRunner.run("framekit", ["detect", "--inputs", list.path, "--output-dir", out.path], timeout: 120)
        #expect(run.status == 65, "\(run.status) \(run.stderr)")
        let results = try run.jsonLines().compactMap { line -> String? in
            guard line["input"] != nil else { return nil }
            return "\(line["status"] as? String ?? ""):\(line["exit_code"].map { "\($0)" } ?? "-")"
        }
        #expect(results == Array(repeating: "failed:65", count: 6) + ["done:-"], "\(results) \(run.stdout)")
    }

    @Test("a batch whose stdout goes away (| head -1) stops at the next input with 74, not after all of them; --report is refused")
    func stdoutGone() throws {
        let inputs = try clips(6, frames: 20) // paced: ~0.7 s each
        let out = Fixtures.temporaryFolder("batch-head")
        let framekit = BinaryRunner.productsFolder.appendingPathComponent("framekit").path
        let run = try BinaryRunner.runTool(
            "/bin/bash",
            [
                "-c",
                "'\(framekit)' detect --inputs '\(inputs.path)' --output-dir '\(out.path)' --realtime --detector haar | head -1 > /dev/null; echo \"status ${PIPESTATUS[0]}\""
            ])
        #expect(run.stdout.contains("status 74"), "\(run.stdout) \(run.stderr)")
        // The first status line reached head; the next write failed; nothing after that began.
        let done = outputs(out).filter { $0.hasSuffix(".stats.json") }.count
        #expect(done >= 1 && done <= 3, "\(done) of 6 inputs processed after the reader left")
        let report = try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--report", "r.html"])
        #expect(report.status == 64 && report.stderr.contains("merge"), "\(report.stderr)")
    }

    @Test("two files whose names differ only by Unicode normalisation (café NFC and NFD) are two inputs, each done")
    func normalisation() throws {
        let folder = Fixtures.temporaryFolder("batch-unicode")
        let nfc = "caf\u{E9}.y4m"
        let nfd = "cafe\u{301}.y4m"
        #expect(Array(nfc.utf8) != Array(nfd.utf8) && nfc == nfd, "Swift compares them equal: the trap")
        for name in [nfc, nfd] { try Y4MWriter.write(frames: 2, width: 64, height: 48, to: folder.appendingPathComponent(name)) }
        try #require((try FileManager.default.contentsOfDirectory(atPath: folder.path)).count == 2)
        let out = Fixtures.temporaryFolder("batch-unicode-out")
        let run = try BinaryRunner.run("framekit", ["detect", "--inputs", folder.path, "--output-dir", out.path, "--detector", "haar"])
        #expect(run.status == 0, "\(run.stderr)")
        let batch = try #require(try run.jsonLines().last?["batch"] as? [String: Any])
        #expect(batch["inputs"] as? Int == 2 && batch["done"] as? Int == 2, "\(batch)")
        #expect(outputs(out).filter { $0.hasSuffix(".stats.json") }.count == 2, "\(outputs(out))")
    }

    @Test("two runs on one folder share the work: each input done once, none failed, nothing of the other's deleted")
    func twoRunsOneFolder() throws {
        // Paced inputs (~0.7 s each), so the two runs overlap on every one of them. Before,
        // the second deleted the first's temporary files (the first failed with 74) and both
        // processed every input.
        let inputs = try clips(4, frames: 20)
        let out = Fixtures.temporaryFolder("batch-shared")
        let arguments = ["detect", "--inputs", inputs.path, "--output-dir", out.path, "--realtime", "--detector", "haar"]
        let runs = Mutex<[BinaryRun]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            Thread.sleep(forTimeInterval: 0.2 * Double(i))
            if let run = try? BinaryRunner.run("framekit", arguments) { runs.withLock { $0.append(run) } }
        }
        let both = runs.withLock { $0 }
        try #require(both.count == 2)
        var doneBy: [String: Int] = [:]
        for run in both {
            #expect(run.status == 0, "\(run.status) \(run.stderr)")
            for line in try run.jsonLines() {
                guard let input = line["input"] as? String else { continue }
                #expect(line["status"] as? String != "failed", "\(line)")
                if line["status"] as? String == "done" { doneBy[URL(fileURLWithPath: input).lastPathComponent, default: 0] += 1 }
            }
        }
        #expect(doneBy == ["clip00.y4m": 1, "clip01.y4m": 1, "clip02.y4m": 1, "clip03.y4m": 1], "\(doneBy)")
        let left = (try FileManager.default.contentsOfDirectory(atPath: out.path)).sorted()
        #expect(left.filter { $0.hasSuffix(".stats.json") }.count == 4 && !left.contains { $0.hasPrefix(".") }, "\(left)")
    }

    @Test("SIGTERM mid-input, after earlier inputs' watches ended: that input's files never take their names, exit 75, a rerun finishes it")
    func terminated() throws {
        // The signal comes during the third input: each earlier input installed and removed a
        // signal watch (cancelling a dispatch signal source once made SIGTERM go unheard).
        let inputs = Fixtures.temporaryFolder("batch-term")
        try Y4MWriter.write(frames: 15, width: 64, height: 48, to: inputs.appendingPathComponent("a.y4m"))
        try Y4MWriter.write(frames: 15, width: 64, height: 48, to: inputs.appendingPathComponent("a2.y4m"))
        try Y4MWriter.write(frames: 150, width: 64, height: 48, to: inputs.appendingPathComponent("b.y4m")) // 5 s in real time
        let out = Fixtures.temporaryFolder("batch-term-out")
        // Once the second input's outputs have taken their names (the third, 5 s long, has begun).
        let secondDone = out.appendingPathComponent("a2.y4m.stats.json").path
        let run = try BinaryRunner.runInterrupted(["detect", "--inputs", inputs.path, "--output-dir", out.path, "--realtime"]) { _ in
            FileManager.default.fileExists(atPath: secondDone)
        }
        #expect(run.reason == .exit && run.status == 75, "\(run.status): \(run.stdout)")
        let done = ["a.y4m.jsonl", "a.y4m.stats.json", "a2.y4m.jsonl", "a2.y4m.stats.json"]
        #expect(outputs(out) == done, "\(outputs(out))")
        let again = try BinaryRunner.run("framekit", ["detect", "--inputs", inputs.path, "--output-dir", out.path])
        #expect(again.status == 0)
        #expect(outputs(out) == done + ["b.y4m.jsonl", "b.y4m.stats.json"], "\(outputs(out))")
    }
}
