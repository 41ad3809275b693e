import Foundation
import FrameKit

/// The figures `framekit bench --save-baseline` writes and `--compare` reads: per input, its
/// relative speed and the noise it was measured with.
struct BenchBaseline {
    struct Entry {
        var relativeSpeed: Double
        var noise: Double
    }

    var entries: [(input: String, entry: Entry)]
    /// The CPUs the process could use when the baseline was made (`CPUAllowance`): a pipeline
    /// and its reference scale differently with CPUs, so speeds compare closely only on the same
    /// number.
    var cpus: Int

    init(inputs: [BenchInput], cpus: Int) {
        entries = inputs.map { ($0.name, Entry(relativeSpeed: $0.relativeSpeed, noise: $0.noise)) }
        self.cpus = cpus
    }

    private init(entries: [(input: String, entry: Entry)], cpus: Int) {
        self.entries = entries
        self.cpus = cpus
    }

    var json: JSON {
        .object([
            ("framekit_bench_baseline", .int(1)), ("cpus", .int(cpus)),
            (
                "inputs",
                .array(
                    entries.map {
                        .object([
                            ("input", .string($0.input)), ("relative_speed", .number($0.entry.relativeSpeed, decimals: 9)),
                            ("noise", .number($0.entry.noise, decimals: 4))
                        ])
                    })
            )
        ])
    }

    /// Reads a baseline; a file that is missing or not one is a clear error (exit 65 or 66's
    /// kin: the data, not the usage).
    static func read(_ path: String) throws -> BenchBaseline {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw RuntimeFailure("cannot read the baseline \(path)", exitCode: ExitCode.dataError)
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["framekit_bench_baseline"] as? Int == 1,
            let inputs = object["inputs"] as? [[String: Any]]
        else { throw RuntimeFailure("\(path) is not a framekit bench baseline (--save-baseline writes one)", exitCode: ExitCode.dataError) }
        var entries: [(input: String, entry: Entry)] = []
        for input in inputs {
            guard let name = input["input"] as? String, let speed = input["relative_speed"] as? Double, speed.isFinite, speed > 0,
                let noise = input["noise"] as? Double, noise.isFinite, noise >= 0
            else { throw RuntimeFailure("\(path) holds an entry that is not a bench figure: \(input)", exitCode: ExitCode.dataError) }
            entries.append((name, Entry(relativeSpeed: speed, noise: noise)))
        }
        return BenchBaseline(entries: entries, cpus: (object["cpus"] as? Int).map { max(1, $0) } ?? 0)
    }

    /// Each input against its baseline: how many times slower it is now (relative to the
    /// reference workload), and whether that is a regression — beyond `tolerance` and beyond
    /// the noise either measurement had (a figure that moved by less than its rounds' own
    /// spread is not evidence).
    func compare(_ inputs: [BenchInput], tolerance: Double, cpus now: Int) -> (lines: [String], regressed: Bool) {
        var lines: [String] = []
        if cpus > 0 && cpus != now {
            lines.append(
                "compare: the baseline was made with \(cpus) CPU(s), this run has \(now): the pipeline and the reference scale differently with CPUs, so this comparison is rough (save a baseline with \(now))"
            )
        }
        var regressed = false
        for input in inputs {
            guard let base = entries.first(where: { $0.input == input.name })?.entry else {
                lines.append("compare: \(input.name): not in the baseline (not compared)")
                continue
            }
            let slowdown = base.relativeSpeed / max(1e-12, input.relativeSpeed)
            let allowance = 1 + max(base.noise, input.noise)
            let worse = slowdown > tolerance && slowdown > allowance
            regressed = regressed || worse
            lines.append(
                String(
                    format: "compare: %@: %.2fx the baseline's time (tolerance %.2fx, noise %.1f%%): %@", input.name, slowdown, tolerance,
                    (allowance - 1) * 100, worse ? "REGRESSION" : "ok"))
        }
        for (name, _) in entries where !inputs.contains(where: { $0.name == name }) {
            lines.append("compare: \(name): in the baseline, not measured now (not compared)")
        }
        return (lines, regressed)
    }
}
