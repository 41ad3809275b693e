import Foundation
import FrameStats

/// A benchmark's figures saved to compare later runs with (`framekit bench --save-baseline`
/// writes one, `--compare` reads it): per input, its relative speed, the noise it was measured
/// with, and its recall and precision where it had truth.
public struct BenchmarkBaseline: Sendable {
    public struct Entry: Sendable {
        public var relativeSpeed: Double
        public var noise: Double
        /// Against the input's truth, when it had one.
        public var quality: Quality?
    }

    public struct Quality: Sendable {
        public var recall: Double
        public var precision: Double
    }

    public var entries: [(input: String, entry: Entry)]
    /// The CPUs the process could use when the baseline was made (`CPUAllowance`): a pipeline
    /// and its reference scale differently with CPUs, so speeds compare closely only on the same
    /// number.
    public var cpus: Int

    public init(results inputs: [BenchmarkResult], cpus: Int) {
        entries = inputs.map {
            (
                $0.name,
                Entry(
                    relativeSpeed: $0.relativeSpeed, noise: $0.noise,
                    quality: $0.accuracy.map { Quality(recall: $0.recall, precision: $0.precision) })
            )
        }
        self.cpus = cpus
    }

    private init(entries: [(input: String, entry: Entry)], cpus: Int) {
        self.entries = entries
        self.cpus = cpus
    }

    /// The baseline as JSON text (what ``read(_:)`` reads).
    public var text: String { json.text + "\n" }

    var json: JSON {
        .object([
            ("framekit_bench_baseline", .int(1)), ("cpus", .int(cpus)),
            (
                "inputs",
                .array(
                    entries.map {
                        .object(
                            [
                                ("input", .string($0.input)), ("relative_speed", .number($0.entry.relativeSpeed, decimals: 9)),
                                ("noise", .number($0.entry.noise, decimals: 4))
                            ]
                                + ($0.entry.quality.map {
                                    [("recall", .number($0.recall, decimals: 6)), ("precision", .number($0.precision, decimals: 6))]
                                } ?? []))
                    })
            )
        ])
    }

    /// Reads a baseline; a file that is missing or not one is a clear error (exit 65 or 66's
    /// kin: the data, not the usage).
    public static func read(_ path: String) throws(BenchmarkError) -> BenchmarkBaseline {
        let data = try BenchmarkError.contents(of: path)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["framekit_bench_baseline"] as? Int == 1,
            let inputs = object["inputs"] as? [[String: Any]]
        else {
            throw .notABaseline(path: path, reason: "not a framekit bench baseline (what --save-baseline or BenchmarkBaseline.text writes)")
        }
        var entries: [(input: String, entry: Entry)] = []
        for input in inputs {
            guard let name = input["input"] as? String, let speed = input["relative_speed"] as? Double, speed.isFinite, speed > 0,
                let noise = input["noise"] as? Double, noise.isFinite, noise >= 0
            else { throw .notABaseline(path: path, reason: "it holds an entry that is not a bench figure: \(input)") }
            var quality: Quality?
            if input["recall"] != nil || input["precision"] != nil {
                guard let recall = input["recall"] as? Double, (0...1).contains(recall), let precision = input["precision"] as? Double,
                    (0...1).contains(precision)
                else { throw .notABaseline(path: path, reason: "\(name)'s recall and precision are not both in 0...1") }
                quality = Quality(recall: recall, precision: precision)
            }
            entries.append((name, Entry(relativeSpeed: speed, noise: noise, quality: quality)))
        }
        return BenchmarkBaseline(entries: entries, cpus: (object["cpus"] as? Int).map { max(1, $0) } ?? 0)
    }

    /// Each input against its baseline: how many times slower it is now (relative to the
    /// reference workload), and whether that is a regression — beyond `tolerance` and beyond
    /// the noise either measurement had (a figure that moved by less than its rounds' own
    /// spread is not evidence); and, where both sides have truth, whether recall or precision
    /// fell by more than `maxQualityDrop` (a file read as fast as it goes gives the same faces
    /// on every run, so any drop is the build's).
    public func compare(_ inputs: [BenchmarkResult], tolerance: Double, maxQualityDrop: Double = 0.02, cpus now: Int) -> BenchmarkComparison
    {
        var comparison = BenchmarkComparison(verdicts: [], notes: [], tolerance: tolerance, maxQualityDrop: maxQualityDrop)
        if cpus > 0 && cpus != now {
            comparison.notes.append(
                "compare: the baseline was made with \(cpus) CPU(s), this run has \(now): the pipeline and the reference scale differently with CPUs, so this comparison is rough (save a baseline with \(now))"
            )
        }
        for input in inputs {
            guard let base = entries.first(where: { $0.input == input.name })?.entry else {
                comparison.notes.append("compare: \(input.name): not in the baseline (not compared)")
                continue
            }
            let slowdown = base.relativeSpeed / max(1e-12, input.relativeSpeed)
            let allowance = 1 + max(base.noise, input.noise)
            var verdict = BenchmarkVerdict(
                input: input.name, slowdown: slowdown, allowance: allowance, tooSlow: slowdown > tolerance && slowdown > allowance,
                quality: nil, qualityDropped: false)
            switch (base.quality, input.accuracy) {
            case (let then?, let accuracy?):
                let now = Quality(recall: accuracy.recall, precision: accuracy.precision)
                verdict.quality = (then, now)
                verdict.qualityDropped =
                    now.recall < then.recall - maxQualityDrop - 1e-9 || now.precision < then.precision - maxQualityDrop - 1e-9
            case (_?, nil):
                comparison.notes.append("compare: \(input.name): the baseline has its recall, this run no --truth (not compared)")
            case (nil, _?): comparison.notes.append("compare: \(input.name): no recall in the baseline to compare with")
            case (nil, nil): break
            }
            comparison.verdicts.append(verdict)
        }
        for (name, _) in entries where !inputs.contains(where: { $0.name == name }) {
            comparison.notes.append("compare: \(name): in the baseline, not measured now (not compared)")
        }
        return comparison
    }
}
