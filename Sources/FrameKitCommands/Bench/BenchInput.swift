import Foundation
import FrameKit

/// One input's rounds in `framekit bench`, and the figures made of them: medians, and the
/// noise as the rounds' spread.
struct BenchInput {
    var name: String
    var rounds: [BenchRound] = []

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    var relativeSpeed: Double { Self.median(rounds.map(\.relativeSpeed)) }
    var resultsPerSecond: Double { Self.median(rounds.map(\.resultsPerSecond)) }
    var cpuSecondsPerFrame: Double { Self.median(rounds.map(\.cpuSecondsPerFrame)) }
    /// The rounds' spread of the relative speed over its median ((max − min) / median): 0 with
    /// one round, which therefore proves nothing about noise.
    var noise: Double {
        let speeds = rounds.map(\.relativeSpeed)
        guard let low = speeds.min(), let high = speeds.max(), relativeSpeed > 0 else { return 0 }
        return (high - low) / relativeSpeed
    }

    var json: JSON {
        .object([
            ("input", .string(name)), ("relative_speed", .number(relativeSpeed, decimals: 6)), ("noise", .number(noise, decimals: 4)),
            ("results_per_second", .number(resultsPerSecond, decimals: 2)),
            ("cpu_seconds_per_frame", .number(cpuSecondsPerFrame, decimals: 5)),
            (
                "rounds",
                .array(
                    rounds.map { r in
                        .object(
                            [
                                ("wall_s", .number(r.wallSeconds, decimals: 3)), ("cpu_s", .number(r.cpuSeconds, decimals: 3)),
                                ("reference_per_second", .number(r.referenceRate, decimals: 2)),
                                ("relative_speed", .number(r.relativeSpeed, decimals: 6))
                            ] + StatsJSON.summaryFields(r.snapshot))
                    })
            )
        ])
    }

    /// The table printed on stdout: one row per input.
    static func table(_ inputs: [BenchInput]) -> String {
        var lines = ["input                                      rounds  results/s  CPU ms/frame  relative speed  noise"]
        for input in inputs {
            let name = input.name.count > 42 ? "…" + input.name.suffix(41) : input.name
            lines.append(
                name.padding(toLength: 43, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6d  %9.1f  %12.2f  %14.4f  %4.1f%%", input.rounds.count, input.resultsPerSecond,
                        input.cpuSecondsPerFrame * 1000, input.relativeSpeed, input.noise * 100))
        }
        return lines.joined(separator: "\n")
    }
}
