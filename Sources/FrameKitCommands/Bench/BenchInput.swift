import Foundation
import FrameKit

/// One input's rounds in `framekit bench`: its figures (FrameBenchmark's ``BenchmarkResult``)
/// and each round's stats summary, which `--json` keeps.
struct BenchInput {
    var result: BenchmarkResult
    var snapshots: [StatsSnapshot] = []

    init(name: String) { result = BenchmarkResult(name: name) }

    var name: String { result.name }

    var json: JSON {
        .object([
            ("input", .string(name)), ("relative_speed", .number(result.relativeSpeed, decimals: 6)),
            ("noise", .number(result.noise, decimals: 4)), ("results_per_second", .number(result.resultsPerSecond, decimals: 2)),
            ("cpu_seconds_per_frame", .number(result.cpuSecondsPerFrame, decimals: 5)),
            ("recall", result.accuracy.map { .number($0.recall, decimals: 6) } ?? .null),
            ("precision", result.accuracy.map { .number($0.precision, decimals: 6) } ?? .null),
            (
                "rounds",
                .array(
                    zip(result.rounds, snapshots).map { r, snapshot in
                        .object(
                            [
                                ("wall_s", .number(r.wallSeconds, decimals: 3)), ("cpu_s", .number(r.cpuSeconds, decimals: 3)),
                                ("reference_per_second", .number(r.referenceRate, decimals: 2)),
                                ("relative_speed", .number(r.relativeSpeed, decimals: 6))
                            ] + StatsJSON.summaryFields(snapshot))
                    })
            )
        ])
    }
}
