import Foundation
import FrameKit
import FrameKitCommands

/// `framekit-bench --suite ablation`: what each of the tracker's rules buys. Every clip of the
/// split is tracked as `framekit detect --input CLIP` tracks it (the inline schedule, the CNN,
/// tiles), once with the product's settings and once with each rule off in turn (a
/// `TrackerPolicy` or `FaceTracker.Options` value changed, nothing else), in this process:
/// recall, precision, the detector's passes a frame (exact as read, where results/s moves by
/// up to ~15% on one kind with nothing changed) and results/s of tracking (frames decoded
/// beforehand). `paced`: as `--realtime` tracks it instead (the background schedule, one
/// inference thread, frames given at 30 fps), with the background schedule's own rules too,
/// and results per CPU second for results/s. A rule whose row is no worse than the product's on
/// any kind, in recall, precision or passes a frame, buys nothing on this split. Some rules
/// cannot be turned off alone: a row's name says what else goes with it.
enum Ablation {
    /// A rule turned off: its name and how.
    struct Variant: Sendable {
        var name: String
        var off: @Sendable (inout FaceTracker.Options, inout TrackerPolicy) -> Void
        /// Whether the rule acts on the background schedule only.
        var pacedOnly = false
    }

    static let variants: [Variant] = [
        Variant(name: "(the product)") { _, _ in },
        // The product again, later in the same run: how far a row moves with nothing changed
        // (paced above all, where passes land on other frames); a smaller change says nothing.
        Variant(name: "(the product, again)") { _, _ in },
        Variant(name: "tiles (+ closer, edge looks)") { o, _ in o.tiles = false },
        Variant(name: "closer looks") { o, _ in o.closerLooks = false },
        Variant(name: "edge looks under a pan") { o, _ in o.edgeLooks = 0 },
        // With the stretch goes the scene's following, and the edge looks that need it.
        Variant(name: "quiet stretch (+ edge looks)") { o, _ in o.quietInterval = 1 },
        // No weak boxes at all: none to confirm with, none to look closer at.
        Variant(name: "weak boxes (+ closer looks)") { o, _ in o.confirmationThreshold = nil },
        Variant(name: "coasting") { o, _ in o.coastFrames = 0 },
        Variant(name: "cut seen in the image") { o, _ in o.cutsFromImage = false },
        Variant(name: "cut after a still scene") { _, p in p.cutJump = .infinity },
        Variant(name: "patch grows/shrinks") { _, p in p.growths = [] },
        Variant(name: "no coasting after weak box") { _, p in p.sureConfidence = 0 },
        Variant(name: "leaving faces need no tile") { _, p in p.leavingSpeed = .infinity },
        Variant(name: "second box on a head") { _, p in p.secondBoxBelow = 0 },
        Variant(name: "lost face overlapping another") { _, p in p.liesOnOverlap = .infinity },
        Variant(name: "sweep in one job", off: { o, _ in o.sweepAtOnce = false }, pacedOnly: true),
        Variant(name: "first pass on the frame", off: { o, _ in o.firstPassOnFrameWithin = nil }, pacedOnly: true)
    ]

    struct Row: Codable {
        var split: String
        /// Paced: `results_per_s` is results per CPU second.
        var paced: Bool
        var rule: String
        var kind: String
        var recall: Double
        var precision: Double
        var results_per_s: Double
        /// The detector's passes a frame (whole frame, tile, edge strip; a tile's closer looks
        /// count within its pass).
        var passes_per_frame: Double
    }

    static func run(
        corpus: Corpus, splits: [Corpus.Split], kinds: [ClipKind], seeds: Int, frames count: Int, paced: Bool,
        rules: [String]? = nil
    ) throws -> [Row] {
        if paced { InferenceThreads.set(1) } // as `framekit detect` sets it for a live source
        let detector = try FaceDetector()
        let variants = self.variants.enumerated().filter { n, variant in
            (paced || !variant.pacedOnly) && (n < 2 || rules.map { $0.contains { variant.name.contains($0) } } ?? true)
        }.map(\.element)
        var rows: [Row] = []
        for split in splits {
            for kind in kinds where kind != .photos {
                var accuracy = [Accuracy](repeating: Accuracy(), count: variants.count)
                var seconds = [Double](repeating: 0, count: variants.count)
                var passes = [Int](repeating: 0, count: variants.count)
                var frameCount = 0
                for seed in corpus.seeds[split, default: []].prefix(seeds) {
                    let clip = try ClipRenderer.render(kind: kind, seed: seed, frames: count, corpus: corpus, split: split)
                    let frames = try clip.frames()
                    frameCount += frames.count
                    for (v, variant) in variants.enumerated() {
                        var options = FaceTracker.Options(schedule: paced ? .background : .inline(interval: 4))
                        var policy = TrackerPolicy.standard
                        variant.off(&options, &policy)
                        let tracker = try FaceTracker(detector: detector, options: options, policy: policy)
                        // Networks set up before the clock starts, as `framekit detect` does.
                        try tracker.prepare(width: clip.width, height: clip.height)
                        let start = ContinuousClock.now
                        let cpu = CPUBudget.processCPUTime()
                        var found: [[Rect]] = []
                        for (n, frame) in frames.enumerated() {
                            if paced {
                                // A camera's pace: frame n comes at n/30 s, not before.
                                let wait = start + .microseconds(n * 1_000_000 / 30) - ContinuousClock.now
                                if wait > .zero { Thread.sleep(forTimeInterval: wait.seconds) }
                            }
                            found.append(try tracker.faces(in: frame).map(\.bounds))
                        }
                        tracker.shutdown()
                        passes[v] += tracker.statistics.passes
                        seconds[v] += paced ? (CPUBudget.processCPUTime() - cpu).seconds : (ContinuousClock.now - start).seconds
                        for (n, boxes) in found.enumerated() { accuracy[v].add(found: boxes, truth: clip.truth[n]) }
                    }
                    log("  ablation \(split.rawValue) \(clip.name): \(variants.count) runs")
                }
                for (v, variant) in variants.enumerated() {
                    rows.append(
                        Row(
                            split: split.rawValue, paced: paced, rule: variant.name, kind: kind.rawValue, recall: accuracy[v].recall,
                            precision: accuracy[v].precision, results_per_s: Double(frameCount) / max(1e-9, seconds[v]),
                            passes_per_frame: Double(passes[v]) / Double(max(1, frameCount))))
                }
            }
        }
        return rows
    }

    /// One line a rule: over every kind, recall and precision (all faces counted together),
    /// passes a frame, results/s against the product's, and every kind whose recall or precision
    /// moved by 0.005 or passes a frame by 0.02.
    static func print(_ rows: [Row]) {
        for split in Set(rows.map(\.split)).sorted() {
            let ofSplit = rows.filter { $0.split == split }
            let paced = ofSplit.first?.paced == true
            let product = Dictionary(uniqueKeysWithValues: ofSplit.filter { $0.rule == variants[0].name }.map { ($0.kind, $0) })
            Swift.print(
                "\n" + pad(paced ? "paced" : "as read", 8) + pad("rule off", 32) + pad("recall", 8) + pad("prec.", 8)
                    + pad("passes/f", 10) + pad(paced ? "cpu/f x" : "res/s x", 9)
                    + "kinds it changes (recall / precision, passes a frame, against the product's)")
            for variant in variants where ofSplit.contains(where: { $0.rule == variant.name }) {
                let mine = ofSplit.filter { $0.rule == variant.name }
                func mean(_ value: (Row) -> Double) -> Double { mine.map(value).reduce(0, +) / Double(max(1, mine.count)) }
                let (recall, precision, passes) = (mean(\.recall), mean(\.precision), mean(\.passes_per_frame))
                // Paced: CPU a frame against the product's (results per CPU second, inverted).
                let speed = mean { r in
                    let ratio = r.results_per_s / max(1e-9, product[r.kind]?.results_per_s ?? r.results_per_s)
                    return paced ? 1 / max(1e-9, ratio) : ratio
                }
                let changes = mine.compactMap { r -> String? in
                    guard let p = product[r.kind] else { return nil }
                    let (dr, dp) = (r.recall - p.recall, r.precision - p.precision)
                    let dpf = r.passes_per_frame - p.passes_per_frame
                    let passesMoved = abs(dpf) >= 0.02
                    guard abs(dr) >= 0.005 || abs(dp) >= 0.005 || passesMoved else { return nil }
                    return "\(r.kind) \(signed(dr))/\(signed(dp))" + (passesMoved ? " passes/f \(signed(dpf, 2))" : "")
                }
                Swift.print(
                    pad(split, 8) + pad(variant.name, 32) + pad(f(recall), 8) + pad(f(precision), 8) + pad(f(passes, 2), 10)
                        + pad(f(speed, 2), 9)
                        + (changes.isEmpty ? "-" : changes.joined(separator: ", ")))
            }
            Swift.print(
                paced
                    ? "(recall, precision and passes a frame: the mean over kinds; cpu/f x: the process's CPU a frame against the product's, the mean over kinds)"
                    : "(recall, precision and passes a frame: the mean over kinds; res/s x: tracking's results/s against the product's, the mean over kinds)"
            )
        }
    }

    private static func signed(_ x: Double, _ digits: Int = 3) -> String { (x >= 0 ? "+" : "") + f(x, digits) }
}
