import Foundation
import FrameKit

/// One run of one input in a `framekit bench` round, and the reference workload's rate timed
/// just before it.
struct BenchRound {
    var snapshot: StatsSnapshot
    var wallSeconds: Double
    var cpuSeconds: Double
    /// ``BenchReference`` workloads a second, this round.
    var referenceRate: Double

    /// Delivered results a second over the whole run (start-up included: what a user waits).
    var resultsPerSecond: Double { Double(snapshot.framesDelivered) / max(1e-6, wallSeconds) }
    /// CPU seconds per captured frame (every thread of the process).
    var cpuSecondsPerFrame: Double { cpuSeconds / Double(max(1, snapshot.framesCaptured)) }
    /// Results a second per reference workload a second: the speed the gate compares.
    var relativeSpeed: Double { resultsPerSecond / max(1e-9, referenceRate) }

    var line: String {
        String(
            format: "%d frames, %.1f results/s, %.2f ms CPU/frame, reference %.1f/s, relative speed %.4f", snapshot.framesCaptured,
            resultsPerSecond, cpuSecondsPerFrame * 1000, referenceRate, relativeSpeed)
    }
}
