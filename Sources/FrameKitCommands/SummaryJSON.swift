import Foundation
import FrameKit

/// The `summary` line of the output contract (docs/cli.md) and the `--stats` file.
enum SummaryJSON {
    static func percentiles(_ p: Percentiles) -> JSON {
        .object([
            ("p50", .number(p.p50, decimals: 3)), ("p95", .number(p.p95, decimals: 3)),
            ("p99", .number(p.p99, decimals: 3)), ("max", .number(p.max, decimals: 3))
        ])
    }

    /// The summary object's fields, shared by `detect`'s last line and `profile`'s entries.
    static func fields(_ s: StatsSnapshot) -> [(String, JSON)] {
        [
            ("preset", .string(s.preset)), ("width", .int(s.width)), ("height", .int(s.height)), ("source", .string(s.source)),
            ("frames_captured", .int(s.framesCaptured)), ("frames_delivered", .int(s.framesDelivered)),
            ("frames_dropped", .int(s.framesDropped)),
            ("drops", .object(DropReason.allCases.map { ($0.rawValue, .int(s.drops[$0.rawValue] ?? 0)) })),
            ("fps", .number(s.fps, decimals: 2)),
            ("latency_ms", percentiles(s.latencyMilliseconds)),
            ("processing_ms", percentiles(s.processingMilliseconds)),
            (
                "stages",
                .object(
                    s.stages.map {
                        (
                            $0.stage,
                            .object([
                                ("p50", .number($0.percentiles.p50, decimals: 3)),
                                ("p99", .number($0.percentiles.p99, decimals: 3))
                            ])
                        )
                    })
            ),
            (
                "memory",
                .object([
                    ("rss_peak_mb", .number(s.memory.rssPeakMB, decimals: 1)),
                    ("pool_peak_bytes", .int(s.memory.poolPeakBytes))
                ])
            )
        ]
    }

    /// `detector`: which detector, model and mode produced the faces (detect's summary).
    static func summary(_ s: StatsSnapshot, detector: [(String, JSON)] = []) -> JSON {
        .object([("summary", .object(fields(s) + detector))])
    }

    /// The whole snapshot (with histogram and timeline) as JSON with snake_case keys.
    static func encoded(_ snapshot: StatsSnapshot) throws -> Data {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(snapshot)
    }
}
