import Foundation

/// One run of one input in a benchmark round, and the reference workload's rate timed just
/// before it.
public struct BenchmarkRound: Sendable {
    public var framesCaptured: Int
    public var framesDelivered: Int
    public var wallSeconds: Double
    /// The whole process's CPU time over the run (every thread).
    public var cpuSeconds: Double
    /// ``BenchmarkReference`` workloads a second, this round.
    public var referenceRate: Double

    public init(framesCaptured: Int, framesDelivered: Int, wallSeconds: Double, cpuSeconds: Double, referenceRate: Double) {
        self.framesCaptured = framesCaptured
        self.framesDelivered = framesDelivered
        self.wallSeconds = wallSeconds
        self.cpuSeconds = cpuSeconds
        self.referenceRate = referenceRate
    }

    /// Delivered results a second over the whole run (start-up included: what a user waits).
    public var resultsPerSecond: Double { Double(framesDelivered) / max(1e-6, wallSeconds) }
    /// CPU seconds per captured frame.
    public var cpuSecondsPerFrame: Double { cpuSeconds / Double(max(1, framesCaptured)) }
    /// Results a second per reference workload a second: the speed a baseline compares.
    public var relativeSpeed: Double { resultsPerSecond / max(1e-9, referenceRate) }

    public var line: String {
        String(
            format: "%d frames, %.1f results/s, %.2f ms CPU/frame, reference %.1f/s, relative speed %.4f", framesCaptured,
            resultsPerSecond, cpuSecondsPerFrame * 1000, referenceRate, relativeSpeed)
    }
}
