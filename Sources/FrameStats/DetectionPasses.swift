/// How a face tracker's detector passes kept up with the video: passes run, frames that came
/// while one was under way, how long a pass took and how many frames old its faces were when
/// they were first reported (FaceTracker's `PassStatistics`, as figures).
public struct DetectionPasses: Sendable, Equatable {
    public var passes: Int
    public var framesWithoutPass: Int
    /// Pass latency, milliseconds: median and 99th percentile of the recent passes, and the
    /// run's longest.
    public var latencyP50Milliseconds: Double
    public var latencyP99Milliseconds: Double
    public var latencyMaxMilliseconds: Double
    /// Frames between a pass's frame and the first frame its faces were reported on.
    public var resultAgeP50Frames: Double
    public var resultAgeMaxFrames: Int
    /// Seconds passes waited for the CPU budget (`--cpu-budget`), in all.
    public var budgetWaitSeconds: Double
    /// Every pass's latency (seconds) and result age (frames) added up over the run: with
    /// ``passes``, a Prometheus summary's `_sum` and `_count`.
    public var latencyTotalSeconds: Double
    public var resultAgeTotalFrames: Int

    public init(
        passes: Int, framesWithoutPass: Int, latencyP50Milliseconds: Double, latencyP99Milliseconds: Double,
        latencyMaxMilliseconds: Double, resultAgeP50Frames: Double, resultAgeMaxFrames: Int, budgetWaitSeconds: Double = 0,
        latencyTotalSeconds: Double = 0, resultAgeTotalFrames: Int = 0
    ) {
        self.budgetWaitSeconds = budgetWaitSeconds
        self.latencyTotalSeconds = latencyTotalSeconds
        self.resultAgeTotalFrames = resultAgeTotalFrames
        self.passes = passes
        self.framesWithoutPass = framesWithoutPass
        self.latencyP50Milliseconds = latencyP50Milliseconds
        self.latencyP99Milliseconds = latencyP99Milliseconds
        self.latencyMaxMilliseconds = latencyMaxMilliseconds
        self.resultAgeP50Frames = resultAgeP50Frames
        self.resultAgeMaxFrames = resultAgeMaxFrames
    }
}
