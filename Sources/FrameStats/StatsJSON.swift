import FrameCore

/// The one JSON mapping of a ``StatsSnapshot``: each figure is named and rounded here only.
/// `detect`'s summary line and `profile`'s entries are ``summaryFields(_:)``, the `--stats` file
/// is ``document(_:)`` (the same fields plus the distribution and the timeline), and the
/// preview's `/stats.json` is ``live(_:faces:clients:)`` (the counts, fps, latency and memory
/// parts of the same fields). docs/stats.md says what each figure means.
package enum StatsJSON {
    /// What was measured: preset, size, source.
    static func identity(_ s: StatsSnapshot) -> [(String, JSON)] {
        [("preset", .string(s.preset)), ("width", .int(s.width)), ("height", .int(s.height)), ("source", .string(s.source))]
    }

    /// Frames captured, delivered and dropped (and by reason).
    static func counts(_ s: StatsSnapshot) -> [(String, JSON)] {
        [
            ("frames_captured", .int(s.framesCaptured)), ("frames_delivered", .int(s.framesDelivered)),
            ("frames_dropped", .int(s.framesDropped)),
            ("drops", .object(DropReason.allCases.map { ($0.rawValue, .int(s.drops[$0.rawValue] ?? 0)) }))
        ]
    }

    static func fps(_ s: StatsSnapshot) -> (String, JSON) { ("fps", .number(s.fps, decimals: 2)) }

    static func percentiles(_ p: Percentiles) -> JSON {
        .object([
            ("p50", .number(p.p50, decimals: 3)), ("p95", .number(p.p95, decimals: 3)),
            ("p99", .number(p.p99, decimals: 3)), ("max", .number(p.max, decimals: 3))
        ])
    }

    static func latency(_ s: StatsSnapshot) -> (String, JSON) { ("latency_ms", percentiles(s.latencyMilliseconds)) }

    static func memory(_ s: StatsSnapshot) -> (String, JSON) {
        (
            "memory",
            .object([
                ("rss_peak_mb", .number(s.memory.rssPeakMB, decimals: 1)), ("rss_current_mb", .number(s.memory.rssCurrentMB, decimals: 1)),
                ("pool_peak_bytes", .int(s.memory.poolPeakBytes))
            ])
        )
    }

    /// The summary object's fields: `detect`'s last line, `profile`'s entries.
    package static func summaryFields(_ s: StatsSnapshot) -> [(String, JSON)] {
        let stages = s.stages.map { stage -> (String, JSON) in
            (
                stage.stage,
                .object([("p50", .number(stage.percentiles.p50, decimals: 3)), ("p99", .number(stage.percentiles.p99, decimals: 3))])
            )
        }
        return identity(s) + counts(s) + [
            fps(s), latency(s), ("processing_ms", percentiles(s.processingMilliseconds)), ("stages", .object(stages)), memory(s)
        ] + (s.detectionPasses.map { [("detection_passes", passes($0))] } ?? [])
    }

    static func passes(_ p: DetectionPasses) -> JSON {
        .object([
            ("passes", .int(p.passes)), ("frames_without_pass", .int(p.framesWithoutPass)),
            (
                "latency_ms",
                .object([
                    ("p50", .number(p.latencyP50Milliseconds, decimals: 3)), ("p99", .number(p.latencyP99Milliseconds, decimals: 3)),
                    ("max", .number(p.latencyMaxMilliseconds, decimals: 3))
                ])
            ),
            ("result_age_frames", .object([("p50", .number(p.resultAgeP50Frames, decimals: 1)), ("max", .int(p.resultAgeMaxFrames))])),
            ("budget_wait_s", .number(p.budgetWaitSeconds, decimals: 3))
        ])
    }

    /// The `--stats` file: the summary's fields, then the capture → delivery latency, the latency
    /// distribution and the per-frame timeline.
    package static func document(_ s: StatsSnapshot) -> JSON {
        func buckets(_ list: [StatsSnapshot.Bucket]) -> JSON {
            .array(
                list.map { b in
                    .object([
                        ("low_ms", .number(b.lowMs, decimals: 3)), ("high_ms", .number(b.highMs, decimals: 3)), ("count", .int(b.count))
                    ])
                })
        }
        let timeline = s.timeline.map { p in
            JSON.object([
                ("sequence", .int(Int(clamping: p.sequence))),
                ("latency_ms", p.latencyMilliseconds.map { .number($0, decimals: 3) } ?? .null),
                ("drop_reason", p.dropReason.map { .string($0.rawValue) } ?? .null)
            ])
        }
        return .object(
            summaryFields(s) + [
                ("delivery_latency_ms", percentiles(s.deliveryLatencyMilliseconds)),
                ("latency_histogram", buckets(s.latencyHistogram)), ("processing_histogram", buckets(s.processingHistogram)),
                ("timeline", .array(timeline))
            ])
    }

    /// The preview's `/stats.json`: what a live page shows, from the same fields.
    package static func live(_ s: StatsSnapshot, faces: Int, clients: Int) -> JSON {
        .object(counts(s) + [fps(s), ("faces", .int(faces)), latency(s), ("clients", .int(clients)), memory(s)])
    }
}

extension StatsSnapshot {
    /// The snapshot as JSON text: the document `framekit detect --stats` writes (the same names
    /// and roundings as every JSON FrameKit prints, docs/stats.md), for a program to save or send.
    public var jsonDocument: String { StatsJSON.document(self).text }

    /// The summary's fields alone as JSON text: what `framekit detect`'s `summary` line holds
    /// of the run's figures.
    public var jsonSummary: String { JSON.object(StatsJSON.summaryFields(self)).text }
}
