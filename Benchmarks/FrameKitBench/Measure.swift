import Foundation
import FrameKit

/// Timing with warm-up and repeated runs; medians and spread, because these machines are
/// shared and noisy. Every speed is also reported against a baseline timed in the same run.
struct Measurement: Codable {
    var median: Double // seconds per run
    var p25: Double
    var p75: Double
    /// Interquartile range relative to the median.
    var spread: Double { median > 0 ? (p75 - p25) / median : 0 }
}

enum Measure {
    /// Times several bodies that do the same work, interleaved (one sample of each in turn), so
    /// that the machine's drift between moments (frequency, other tenants) falls on all of them
    /// alike. A body faster than ~0.5 ms is repeated within each sample and the time divided, so
    /// that the clock's resolution and the timing call are not what is measured.
    static func interleaved(warmUp: Int = 3, runs: Int, _ bodies: [() throws -> Void]) throws -> [Measurement] {
        var repeats: [Int] = []
        for body in bodies {
            for _ in 0..<warmUp { try body() }
            let start = Timestamp.now()
            try body()
            let once = max(Timestamp.now().seconds(since: start), 1e-7)
            repeats.append(max(1, min(200, Int(0.0005 / once))))
        }
        var samples = [[Double]](repeating: [], count: bodies.count)
        for _ in 0..<runs {
            for (i, body) in bodies.enumerated() {
                let start = Timestamp.now()
                for _ in 0..<repeats[i] { try body() }
                samples[i].append(Timestamp.now().seconds(since: start) / Double(repeats[i]))
            }
        }
        return samples.map { s in
            let sorted = s.sorted()
            func q(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))] }
            return Measurement(median: q(0.5), p25: q(0.25), p75: q(0.75))
        }
    }
}

/// Keeps the optimiser from deleting work whose result is unused.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }
