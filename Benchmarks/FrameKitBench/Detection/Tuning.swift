import Foundation
import FrameKit
import FrameKitCommands
import Synchronization

/// `framekit-bench --suite tune`: how the tracker's defaults were chosen. On the tune split
/// only, every combination of score threshold, pass interval (and how far it stretches while
/// passes change nothing), correlation floor, missed passes, confirmation threshold and the
/// passes that establish a face is scored per kind of clip. Passes here are whole-frame only
/// (the cached network has no tiles): `framekit detect` with tiles is scored by the detection
/// suite.
/// The network runs once per frame (at the lowest threshold, its faces cached: greedy
/// suppression keeps the same strong boxes whatever weaker ones there are), so a combination
/// costs only its tracking.
enum Tuning {
    /// One combination of the options tuned.
    struct Settings: Hashable {
        var scoreThreshold: Double
        var passInterval: Int
        /// The longest the interval stretches while passes change nothing (the pass interval: fixed).
        var quietInterval: Int
        var minCorrelation: Double
        var maxMissedPasses: Int
        /// The weakest box that confirms a tracked face (nil: only reported faces confirm).
        var confirmationThreshold: Double?
        /// Passes that must have reported a face before weaker boxes confirm it.
        var establishedAfter: Int
    }

    struct Row {
        var settings: Settings
        var recall: [String: Double]
        var precision: [String: Double]
        /// Full passes per frame (the cost: the network is ~95% of the time).
        var passesPerFrame: Double
        /// The worst kind's F1 (what the defaults maximise, with passes per frame as the price).
        var worstF1: Double
    }

    /// Replays the network's faces for the frame being tracked.
    final class CachedDetector: FaceDetecting {
        let passes: [[Face]]
        let threshold: Double
        private let state = Mutex((frame: 0, calls: 0))
        init(passes: [[Face]], threshold: Double) {
            self.passes = passes
            self.threshold = threshold
        }
        var name: String { "cached" }
        var modelURL: URL { URL(fileURLWithPath: "/") }
        func setFrame(_ index: Int) { state.withLock { $0.frame = index } }
        var calls: Int { state.withLock { $0.calls } }
        /// The frame's boxes whatever the region and scale (passes here are whole-frame only).
        func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
            -> DetectionPass
        {
            let frame = state.withLock { s -> Int in
                s.calls += 1
                return s.frame
            }
            // Split as FaceDetector.pass splits.
            return DetectionPass(splitting: passes[frame], threshold: threshold, floor: floor)
        }
    }

    static func run(corpus: Corpus, frames count: Int, seeds: Int) throws -> [Row] {
        // (A first grid of threshold 0.3/0.4/0.5 and correlation 0.5/0.6/0.7 never put 0.5 of
        // either among its best 25 rows.)
        let thresholds = [0.3, 0.4]
        let intervals = [3, 4, 5]
        // How far the interval stretches in a quiet scene, tried with the other options at their
        // defaults only (every combination would be four times the grid).
        let quietIntervals = [8, 12, 16]
        let defaults = FaceTracker.Options()
        let correlations = [0.6, 0.7]
        let missed = [0, 1]
        let confirmations: [Double?] = [nil, 0.05, 0.1, 0.15]
        let establishing = [1, 2, 3, 4]
        var accuracy: [Settings: [ClipKind: Accuracy]] = [:]
        var passes: [Settings: (calls: Int, frames: Int)] = [:]
        let network = try FaceDetector(options: .init(scoreThreshold: confirmations.compactMap { $0 }.min()!))
        for kind in ClipKind.allCases {
            for seed in corpus.seeds[.tune, default: []].prefix(seeds) {
                let clip = try ClipRenderer.render(kind: kind, seed: seed, frames: count, corpus: corpus, split: .tune)
                let frames = try clip.frames()
                let found = try frames.map { try network.detect(in: $0) }
                log("  tune \(clip.name): network on \(frames.count) frames")
                let grid = thresholds.flatMap { t in
                    intervals.flatMap { i in
                        correlations.flatMap { c in
                            missed.flatMap { m in
                                // Without confirmation, establishing means nothing: one row.
                                confirmations.flatMap { k in
                                    (k == nil ? [1] : establishing).flatMap { e in
                                        let isDefault =
                                            t == FaceDetector.Options().scoreThreshold && c == defaults.minCorrelation
                                            && m == defaults.maxMissedPasses
                                            && k == defaults.confirmationThreshold && e == defaults.establishedAfter
                                        return ([i] + (isDefault ? quietIntervals : [])).map {
                                            Settings(
                                                scoreThreshold: t, passInterval: i, quietInterval: $0, minCorrelation: c,
                                                maxMissedPasses: m, confirmationThreshold: k, establishedAfter: e)
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                for key in grid {
                    let cached = CachedDetector(passes: found, threshold: key.scoreThreshold)
                    var options = FaceTracker.Options(schedule: .inline(interval: key.passInterval))
                    options.quietInterval = key.quietInterval
                    options.minCorrelation = key.minCorrelation
                    options.maxMissedPasses = key.maxMissedPasses
                    options.confirmationThreshold = key.confirmationThreshold
                    options.establishedAfter = key.establishedAfter
                    let tracker = try FaceTracker(detector: cached, options: options)
                    var a = Accuracy()
                    for (n, frame) in frames.enumerated() {
                        cached.setFrame(n)
                        a.add(found: try tracker.faces(in: frame).map(\.bounds), truth: clip.truth[n])
                    }
                    accuracy[key, default: [:]][kind] = (accuracy[key]?[kind] ?? Accuracy()) + a
                    let p = passes[key] ?? (0, 0)
                    passes[key] = (p.calls + cached.calls, p.frames + frames.count)
                }
            }
        }
        return accuracy.map { key, perKind in
            let f1 = perKind.values.map { a in a.recall + a.precision == 0 ? 0 : 2 * a.recall * a.precision / (a.recall + a.precision) }
            let p = passes[key]!
            return Row(
                settings: key,
                recall: Dictionary(uniqueKeysWithValues: perKind.map { ($0.key.rawValue, $0.value.recall) }),
                precision: Dictionary(uniqueKeysWithValues: perKind.map { ($0.key.rawValue, $0.value.precision) }),
                passesPerFrame: Double(p.calls) / Double(max(1, p.frames)), worstF1: f1.min() ?? 0)
        }.sorted { ($0.worstF1, -$0.passesPerFrame) > ($1.worstF1, -$1.passesPerFrame) }
    }
}
