import Foundation
import FrameKit

/// Timing with warm-up and repeated runs; medians and spread, because these machines are
/// shared and noisy. Every speed is also reported against a baseline timed in the same run.
struct Measurement: Codable {
    var median: Double     // seconds per run
    var p25: Double
    var p75: Double
    /// Interquartile range relative to the median.
    var spread: Double { median > 0 ? (p75 - p25) / median : 0 }
}

enum Measure {
    static func time(warmUp: Int = 3, runs: Int, _ body: () throws -> Void) rethrows -> Measurement {
        for _ in 0..<warmUp { try body() }
        var samples: [Double] = []
        samples.reserveCapacity(runs)
        for _ in 0..<runs {
            let start = Timestamp.now()
            try body()
            samples.append(Timestamp.now().seconds(since: start))
        }
        samples.sort()
        func q(_ p: Double) -> Double { samples[min(samples.count - 1, Int(Double(samples.count - 1) * p))] }
        return Measurement(median: q(0.5), p25: q(0.25), p75: q(0.75))
    }
}

/// Keeps the optimiser from deleting work whose result is unused.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
