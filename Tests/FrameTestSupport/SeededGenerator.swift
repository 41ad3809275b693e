import Foundation

/// A small deterministic generator (SplitMix64), so that fuzzed requests and rendered clips are
/// the same in every run. Shared by the tests and the benchmark.
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    /// The fuzz targets' generator: `FRAMEKIT_FUZZ_SEED` when set (CI sets a new one per commit and
    /// prints it; set it to replay a failure), else `seed`.
    public static func fuzzing(default seed: UInt64) -> SeededGenerator {
        SeededGenerator(seed: ProcessInfo.processInfo.environment["FRAMEKIT_FUZZ_SEED"].flatMap { UInt64($0) } ?? seed)
    }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
