import Foundation
import FrameKit

/// One `framekit detect` process with `sources` sources of one kind: its peak resident memory.
struct FleetMemoryResult: Codable {
    /// `virtual` (the virtual camera at 720p, `--device virtual:N`) or `input` (a 720p MJPEG
    /// clip per source, `--input FILE --realtime`).
    var source: String
    var sources: Int
    var detector: String
    /// VmHWM of the process, from its summary (`memory.rss_peak_mb`).
    var peak_rss_mb: Double
    var wall_s: Double
}

/// What a fleet of cameras costs in memory in one process: 1, 4 and 16 sources of 720p with
/// the CNN, each run for a few seconds, and the memory each added source costs. The networks
/// are shared by every source (one model per process, a network per input size and pass run
/// at once), so past the first sources only each source's own state is added.
enum FleetMemorySuite {
    static let counts = [1, 4, 16]

    static func run(framekit: URL, corpus: Corpus, seconds: Double, work: URL) throws -> [FleetMemoryResult] {
        var rows: [FleetMemoryResult] = []
        for n in counts {
            let devices = (1...n).flatMap { ["--device", $0 == 1 ? "virtual" : "virtual:\($0)"] }
            let arguments = ["detect"] + devices + ["--preset", "hd1280x720", "--duration", "\(seconds)"]
            let run = try measure(framekit, arguments)
            rows.append(FleetMemoryResult(source: "virtual", sources: n, detector: "cnn", peak_rss_mb: run.peakMB, wall_s: run.wall))
        }
        guard let seed = corpus.seeds[.report]?.first else { return rows }
        let clip = try ClipRenderer.render(kind: .moving, seed: seed, frames: Int(seconds * 30), corpus: corpus, split: .report)
        // One name per source (detect refuses the same --input twice): hard links to one clip.
        let files = (1...(counts.max() ?? 1)).map { work.appendingPathComponent("fleet-memory-\($0)-\(clip.name).mjpeg") }
        try clip.mjpeg.write(to: files[0])
        for file in files.dropFirst() { try FileManager.default.linkItem(at: files[0], to: file) }
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        for n in counts {
            let arguments = ["detect"] + files.prefix(n).flatMap { ["--input", $0.path] } + ["--realtime"]
            let run = try measure(framekit, arguments)
            rows.append(FleetMemoryResult(source: "input", sources: n, detector: "cnn", peak_rss_mb: run.peakMB, wall_s: run.wall))
        }
        return rows
    }

    /// Megabytes each added source costs: the least-squares slope of peak memory over sources,
    /// and the same from the 4th source on (where every pass that runs at once already has
    /// its network: the rest is the sources' own state).
    static func slopes(_ rows: [FleetMemoryResult], source: String) -> (all: Double, fromFour: Double)? {
        let points = rows.filter { $0.source == source }.map { (Double($0.sources), $0.peak_rss_mb) }
        guard points.count >= 2 else { return nil }
        func slope(_ p: [(Double, Double)]) -> Double {
            let mx = p.map(\.0).reduce(0, +) / Double(p.count)
            let my = p.map(\.1).reduce(0, +) / Double(p.count)
            let sxx = p.map { ($0.0 - mx) * ($0.0 - mx) }.reduce(0, +)
            return sxx > 0 ? p.map { ($0.0 - mx) * ($0.1 - my) }.reduce(0, +) / sxx : 0
        }
        let later = points.filter { $0.0 >= 4 }
        return (slope(points), later.count >= 2 ? slope(later) : slope(points))
    }

    static func print(_ rows: [FleetMemoryResult]) {
        Swift.print("\n" + pad("fleet memory", 14) + pad("sources", 9) + pad("detector", 10) + pad("peak RSS MB", 13) + "wall s")
        for r in rows {
            Swift.print(pad(r.source, 14) + pad("\(r.sources)", 9) + pad(r.detector, 10) + pad(f(r.peak_rss_mb, 0), 13) + f(r.wall_s, 1))
        }
        for source in ["virtual", "input"] {
            guard let s = slopes(rows, source: source) else { continue }
            Swift.print(
                "fleet memory \(source): \(f(s.all, 1)) MB per added 720p source (fit over \(counts.map(String.init).joined(separator: ", "))), "
                    + "\(f(s.fromFour, 1)) MB from the 4th on")
        }
    }

    /// A regression: a peak or a per-source slope beyond the baseline's by more than a quarter
    /// (and 2 MB a source). Memory is not noisy as time is: the speed tolerance does not apply.
    static func regressions(_ rows: [FleetMemoryResult], baseline: [FleetMemoryResult]) -> [String] {
        var found: [String] = []
        for r in rows {
            guard let b = baseline.first(where: { $0.source == r.source && $0.sources == r.sources && $0.detector == r.detector })
            else { continue }
            if r.peak_rss_mb > b.peak_rss_mb * 1.25 {
                found.append("fleet memory \(r.source) x\(r.sources): peak \(f(r.peak_rss_mb, 0)) MB vs baseline \(f(b.peak_rss_mb, 0)) MB")
            }
        }
        for source in ["virtual", "input"] {
            guard let now = slopes(rows, source: source), let then = slopes(baseline, source: source) else { continue }
            if now.all > then.all * 1.25 + 2 {
                found.append("fleet memory \(source): \(f(now.all, 1)) MB per added source vs baseline \(f(then.all, 1)) MB")
            }
        }
        return found
    }

    /// Runs `executable` to its end: its peak resident memory (the largest `rss_peak_mb` of its
    /// summaries: its own VmHWM) and wall time. Not wait4's `ru_maxrss`: a child started by
    /// posix_spawn shares this process's memory until it execs, and Linux keeps that memory's
    /// peak in the child's figure (every row read 579 MB, the bench's own size, in CI).
    /// A failure (a non-zero exit, no summary) throws.
    static func measure(_ executable: URL, _ arguments: [String]) throws -> (peakMB: Double, wall: Double) {
        let start = Timestamp.now()
        let output = try DetectionSuite.runProcess(executable, arguments)
        let wall = Timestamp.now().seconds(since: start)
        let peaks = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("{\"summary\""), let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let memory = (object["summary"] as? [String: Any])?["memory"] as? [String: Any]
            else { return nil }
            return memory["rss_peak_mb"] as? Double
        }
        guard let peak = peaks.max() else {
            throw RuntimeError("fleet memory: framekit \(arguments.prefix(6).joined(separator: " ")) … printed no summary")
        }
        return (peak, wall)
    }
}
