import Foundation
import FrameKit
import FrameTestSupport

/// One tool on one clip under one condition of the CPU: `framekit detect --input CLIP` (as
/// fast as read) or the MediaPipe peer, the whole process.
struct ContentionResult: Codable {
    var kind: String
    /// `idle`; `busy-2` (two busy loops beside it); `pinned-1` (taskset to CPU 0, as a Slurm
    /// task); `quota-1` (a cgroup CPU quota of one CPU, as a Kubernetes `limits: cpu: 1`).
    var condition: String
    /// `framekit-cli`, `framekit-python` (FrameKit's Python package: framekit_peer.py) or `mediapipe`.
    var detector: String
    var frames: Int
    /// The tool's own figure: frames over its loop's time (decoding included, start-up not).
    var results_per_s: Double
    var recall: Double
    var precision: Double
    /// The whole process's user and system CPU time over the frames (start-up included).
    var cpu_s_per_frame: Double
    var wall_s: Double
}

/// The same clips, FrameKit and MediaPipe beside each other, under the CPU users give them:
/// idle, two busy loops, pinned to one CPU, a CPU quota of one CPU (skipped, with the reason
/// printed, where no cgroup can be made). Speeds are compared within each condition.
enum ContentionSuite {
    enum Condition: String, CaseIterable {
        case idle
        case busy = "busy-2"
        case pinned = "pinned-1"
        case quota = "quota-1"
    }

    /// Runs `kinds` of the report split's first seed, `frames` frames each, every tool in every
    /// condition in turn (tools alternate within a condition, so a drift of the machine's speed
    /// falls on both).
    static func run(
        corpus: Corpus, kinds: [ClipKind], frames: Int, framekit: URL, mediapipe: URL?, framekitPython: URL?, peers: URL, work: URL,
        keep: URL? = nil
    ) throws -> [ContentionResult] {
        guard let seed = corpus.seeds[.report]?.first else { return [] }
        var rows: [ContentionResult] = []
        let taskset = URL(fileURLWithPath: "/usr/bin/taskset")
        for kind in kinds {
            let clip = try ClipRenderer.render(kind: kind, seed: seed, frames: frames, corpus: corpus, split: .report)
            let file = work.appendingPathComponent("contention-\(clip.name).mjpeg")
            try clip.mjpeg.write(to: file)
            defer { try? DetectionSuite.keepOrRemove(file, truth: clip.truth, in: keep) }
            for condition in Condition.allCases {
                var wrap: ([String]) -> [String] = { $0 }
                var quota: CPUQuotaGroup? = nil
                switch condition {
                case .idle, .busy: break
                case .pinned:
                    guard FileManager.default.isExecutableFile(atPath: taskset.path) else {
                        log("contention: pinned-1 skipped: no \(taskset.path) (util-linux)")
                        continue
                    }
                    wrap = { [taskset.path, "-c", "0"] + $0 }
                case .quota:
                    guard CPUQuotaGroup.writable != nil else {
                        log("contention: quota-1 skipped: no writable cgroup cpu controller here (needs root)")
                        continue
                    }
                    let group = try CPUQuotaGroup(cpus: 1)
                    quota = group
                    wrap = { group.wrapping($0) }
                }
                defer { quota?.remove() }
                var tools: [(String, [String])] = [("framekit-cli", [framekit.path, "detect", "--input", file.path])]
                if let framekitPython {
                    tools.append(
                        ("framekit-python", [framekitPython.path, peers.appendingPathComponent("framekit_peer.py").path, file.path]))
                }
                if let mediapipe {
                    tools.append(("mediapipe", [mediapipe.path, peers.appendingPathComponent("mediapipe_peer.py").path, file.path]))
                }
                for (name, command) in tools {
                    let load = try BusyLoops(count: condition == .busy ? 2 : 0)
                    let measured = try runMeasured(wrap(command))
                    load.stop()
                    let run =
                        name != "framekit-cli"
                        ? DetectionSuite.peerRun(measured.output, truth: clip.truth)
                        : DetectionSuite.cliRun(measured.output, truth: clip.truth).run
                    rows.append(
                        ContentionResult(
                            kind: kind.rawValue, condition: condition.rawValue, detector: name, frames: clip.truth.count,
                            results_per_s: run.resultsPerSecond ?? 0, recall: run.accuracy.recall, precision: run.accuracy.precision,
                            cpu_s_per_frame: measured.cpuSeconds / Double(max(1, clip.truth.count)), wall_s: measured.wallSeconds))
                }
            }
        }
        return rows
    }

    /// Runs `command` to its end: its standard output, wall time and CPU time (user and system,
    /// of it and the children it waited for: `getrusage(RUSAGE_CHILDREN)` before and after,
    /// with no other child reaped meanwhile; the busy loops are reaped after).
    static func runMeasured(_ command: [String]) throws -> (output: Data, cpuSeconds: Double, wallSeconds: Double) {
        func childrenCPU() -> Double {
            var usage = rusage()
            getrusage(RUSAGE_CHILDREN.rawValue, &usage)
            return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
                + Double(usage.ru_stime.tv_usec) / 1e6
        }
        let cpuBefore = childrenCPU()
        let start = Timestamp.now()
        let output = try DetectionSuite.runProcess(URL(fileURLWithPath: command[0]), Array(command.dropFirst()))
        let wall = Timestamp.now().seconds(since: start)
        return (output, childrenCPU() - cpuBefore, wall)
    }

    /// The table: per kind and condition, each tool's figures, FrameKit's results/s as a
    /// ratio to MediaPipe's in the same condition, and its CPU per frame as a ratio to idle.
    static func print(_ rows: [ContentionResult]) {
        Swift.print(
            "\n" + pad("contention", 22) + pad("condition", 11) + pad("detector", 17) + pad("results/s", 11) + pad("recall", 8)
                + pad("precision", 11) + pad("cpu ms/frame", 14) + pad("wall s", 8) + pad("/mediapipe", 12) + "cpu/idle")
        for r in rows {
            let peer = rows.first { $0.kind == r.kind && $0.condition == r.condition && $0.detector == "mediapipe" }
            let idle = rows.first { $0.kind == r.kind && $0.condition == "idle" && $0.detector == r.detector }
            Swift.print(
                pad(r.kind, 22) + pad(r.condition, 11) + pad(r.detector, 17) + pad(f(r.results_per_s, 1), 11) + pad(f(r.recall), 8)
                    + pad(f(r.precision), 11) + pad(f(r.cpu_s_per_frame * 1000, 1), 14) + pad(f(r.wall_s, 2), 8)
                    + pad(
                        r.detector != "mediapipe" ? peer.map { f(r.results_per_s / max(1e-9, $0.results_per_s), 2) + "x" } ?? "—" : "",
                        12)
                    + (idle.map { f(r.cpu_s_per_frame / max(1e-9, $0.cpu_s_per_frame), 2) + "x" } ?? "—"))
        }
        for condition in Condition.allCases {
            for (detector, label) in [("framekit-cli", "framekit detect"), ("framekit-python", "framekit (Python)")] {
                let ours = rows.filter { $0.condition == condition.rawValue && $0.detector == detector }
                let theirs = rows.filter { $0.condition == condition.rawValue && $0.detector == "mediapipe" }
                guard !ours.isEmpty, ours.count == theirs.count else { continue }
                func mean(_ rows: [ContentionResult], _ value: (ContentionResult) -> Double) -> Double {
                    rows.map(value).reduce(0, +) / Double(rows.count)
                }
                Swift.print(
                    "contention \(condition.rawValue): \(label) \(f(mean(ours, \.results_per_s), 1)) results/s = "
                        + "\(f(mean(ours, \.results_per_s) / max(1e-9, mean(theirs, \.results_per_s)), 2))x MediaPipe's at "
                        + "\(f(mean(ours, \.recall) / max(1e-9, mean(theirs, \.recall)), 2))x its recall (mean over kinds), same run")
            }
        }
    }

    /// Regressions against a baseline's rows: FrameKit's CPU per frame under contention as a ratio to
    /// its own idle figure in the same run (spinning threads show here first: 20x when pinned),
    /// its results/s as a ratio to MediaPipe's in the same condition where both runs have
    /// MediaPipe, and its recall (reading as fast as it goes is deterministic).
    static func regressions(_ rows: [ContentionResult], baseline: [ContentionResult], tolerance: Double) -> [String] {
        var found: [String] = []
        func row(_ rows: [ContentionResult], _ r: ContentionResult, condition: String? = nil, detector: String? = nil)
            -> ContentionResult?
        {
            rows.first { $0.kind == r.kind && $0.condition == (condition ?? r.condition) && $0.detector == (detector ?? r.detector) }
        }
        for r in rows where r.detector == "framekit-cli" {
            guard let b = row(baseline, r), b.frames == r.frames else { continue }
            if r.recall < b.recall - 0.03 {
                found.append("contention \(r.kind) \(r.condition): recall \(f(r.recall)) vs baseline \(f(b.recall))")
            }
            if r.condition != "idle", let idle = row(rows, r, condition: "idle"), let bIdle = row(baseline, r, condition: "idle") {
                let ratio = r.cpu_s_per_frame / max(1e-9, idle.cpu_s_per_frame)
                let baseRatio = b.cpu_s_per_frame / max(1e-9, bIdle.cpu_s_per_frame)
                if ratio > baseRatio * (1 + tolerance) {
                    found.append(
                        "contention \(r.kind) \(r.condition): CPU per frame \(f(ratio, 2))x idle's vs baseline \(f(baseRatio, 2))x")
                }
            }
            if let peer = row(rows, r, detector: "mediapipe"), let bPeer = row(baseline, r, detector: "mediapipe"), peer.results_per_s > 0,
                bPeer.results_per_s > 0
            {
                let ratio = r.results_per_s / peer.results_per_s
                let baseRatio = b.results_per_s / bPeer.results_per_s
                if ratio < baseRatio / (1 + tolerance) {
                    found.append(
                        "contention \(r.kind) \(r.condition): \(f(ratio, 2))x MediaPipe's results/s vs baseline \(f(baseRatio, 2))x")
                }
            }
        }
        return found
    }
}
