/// What a ``FaceTracker``'s detector passes cost and how late their faces arrived: the figures
/// that say whether detection keeps up with the video (a pass slower than the frames is not an
/// error, its faces are carried to the current frame, but new faces appear that much later).
public struct PassStatistics: Sendable, Equatable {
    /// Passes finished and joined with the tracks.
    public var passes = 0
    /// Frames that came while a pass was under way or held back by the CPU budget, so no pass
    /// started on them (background schedule: passes run back to back, each on the newest frame).
    /// Frames a quiet scene lets go by without a pass (``FaceTracker/Options/quietInterval``)
    /// are not counted: no pass was wanted on them.
    public var framesWithoutPass = 0
    /// The most recent pass latencies (seconds) and result ages (frames), oldest first: a window
    /// of the last ``window`` passes, so the figures follow the machine's current load.
    public private(set) var recentLatencies: [Double] = []
    public private(set) var recentAges: [Int] = []
    /// Seconds passes were held back by their scheduler's CPU budget (``PassScheduler``) before
    /// they started, in all.
    public private(set) var budgetWaitSeconds = 0.0
    /// The longest pass and the oldest result of the whole run.
    public private(set) var maxLatency = 0.0
    public private(set) var maxAge = 0
    /// Every pass's latency (seconds) and result age (frames) added up, over the whole run.
    public private(set) var totalLatency = 0.0
    public private(set) var totalAge = 0
    public static let window = 512

    public init() {}

    /// Pass latency in seconds at quantile `q` (0…1) over the recent window; 0 before any pass.
    public func latency(quantile q: Double) -> Double { Self.quantile(recentLatencies, q) }

    /// Result age in frames at quantile `q`: frames between a pass's frame and the frame its
    /// faces were first reported on (0 on the inline schedule).
    public func age(quantile q: Double) -> Double { Self.quantile(recentAges.map(Double.init), q) }

    mutating func recordBudgetWait(_ wait: Duration) { budgetWaitSeconds += wait.seconds }

    mutating func recordPass(latency: Duration, age: Int) {
        let seconds = latency.seconds
        passes &+= 1
        if recentLatencies.count == Self.window { recentLatencies.removeFirst() }
        if recentAges.count == Self.window { recentAges.removeFirst() }
        recentLatencies.append(seconds)
        recentAges.append(age)
        maxLatency = max(maxLatency, seconds)
        maxAge = max(maxAge, age)
        totalLatency += seconds
        totalAge &+= age
    }

    static func quantile(_ values: [Double], _ q: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let rank = Int((min(1, max(0, q)) * Double(sorted.count - 1)).rounded())
        return sorted[rank]
    }
}
