import Foundation

/// What ``BenchmarkBaseline/compare(_:tolerance:maxQualityDrop:cpus:)`` found: a verdict per
/// input measured and in the baseline, and notes (inputs on one side only, a different CPU count).
public struct BenchmarkComparison: Sendable {
    public var verdicts: [BenchmarkVerdict]
    public var notes: [String]
    public var tolerance: Double
    public var maxQualityDrop: Double
    public var regressed: Bool { verdicts.contains { $0.regressed } }

    /// The notes, then one line per input compared (`REGRESSION (...)` or `ok` at its end).
    public var lines: [String] {
        notes
            + verdicts.map { v in
                var line = String(
                    format: "compare: %@: %.2fx the baseline's time (tolerance %.2fx, noise %.1f%%)", v.input, v.slowdown, tolerance,
                    (v.allowance - 1) * 100)
                if let q = v.quality {
                    line += String(
                        format: ", recall %.3f (was %.3f), precision %.3f (was %.3f)", q.now.recall, q.then.recall, q.now.precision,
                        q.then.precision)
                }
                let what = [v.tooSlow ? "SLOWER" : nil, v.qualityDropped ? "FEWER FACES FOUND OR MORE FALSE ONES" : nil].compactMap { $0 }
                return line + ": " + (what.isEmpty ? "ok" : "REGRESSION (" + what.joined(separator: ", ") + ")")
            }
    }
}
