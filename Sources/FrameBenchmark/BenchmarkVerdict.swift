/// One input compared with its baseline: its slowdown (relative to the reference workload) and,
/// with truth on both sides, its recall and precision then and now.
public struct BenchmarkVerdict: Sendable {
    public var input: String
    /// The baseline's relative speed over this run's: 2 is twice the time.
    public var slowdown: Double
    /// 1 + the larger noise of the two measurements.
    public var allowance: Double
    /// Slower beyond both the tolerance and the noise.
    public var tooSlow: Bool
    public var quality: (then: BenchmarkBaseline.Quality, now: BenchmarkBaseline.Quality)?
    /// Recall or precision fell by more than the comparison's allowed drop.
    public var qualityDropped: Bool
    public var regressed: Bool { tooSlow || qualityDropped }
}
