import Foundation

/// One input's rounds, and the figures made of them: medians, and the noise as the rounds'
/// spread; its recall and precision where it has truth.
public struct BenchmarkResult: Sendable {
    public var name: String
    public var rounds: [BenchmarkRound]
    /// Against the input's truth (a run after the timed rounds), when it has one.
    public var accuracy: Accuracy?

    public init(name: String, rounds: [BenchmarkRound] = [], accuracy: Accuracy? = nil) {
        self.name = name
        self.rounds = rounds
        self.accuracy = accuracy
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    public var relativeSpeed: Double { Self.median(rounds.map(\.relativeSpeed)) }
    public var resultsPerSecond: Double { Self.median(rounds.map(\.resultsPerSecond)) }
    public var cpuSecondsPerFrame: Double { Self.median(rounds.map(\.cpuSecondsPerFrame)) }
    /// The rounds' spread of the relative speed over its median ((max − min) / median): 0 with
    /// one round, which therefore proves nothing about noise.
    public var noise: Double {
        let speeds = rounds.map(\.relativeSpeed)
        guard let low = speeds.min(), let high = speeds.max(), relativeSpeed > 0 else { return 0 }
        return (high - low) / relativeSpeed
    }

    /// A table, one row per input: rounds, results/s, CPU ms/frame, relative speed, noise,
    /// recall and precision.
    public static func table(_ results: [BenchmarkResult]) -> String {
        var lines = ["input                                      rounds  results/s  CPU ms/frame  relative speed  noise  recall  precision"]
        for result in results {
            let name = result.name.count > 42 ? "…" + result.name.suffix(41) : result.name
            lines.append(
                name.padding(toLength: 43, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6d  %9.1f  %12.2f  %14.4f  %4.1f%%", result.rounds.count, result.resultsPerSecond,
                        result.cpuSecondsPerFrame * 1000, result.relativeSpeed, result.noise * 100)
                    + (result.accuracy.map { String(format: "  %6.3f  %9.3f", $0.recall, $0.precision) } ?? "       —          —"))
        }
        return lines.joined(separator: "\n")
    }
}
