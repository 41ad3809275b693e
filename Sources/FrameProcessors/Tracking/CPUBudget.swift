import FrameCore
import Glibc
import Synchronization

/// A ceiling on the CPU the process uses, in cores' worth (1.5: on average at most one and a
/// half cores' CPU time a wall-clock second), that a ``PassScheduler`` keeps its passes under:
/// a tracker starts no pass while the process is over the budget, and starts one on the first
/// frame after it is back within it, so the pass looks at a frame of that moment, not at one
/// kept while waiting. What counts is the whole process's CPU time, as `top` shows it — the
/// frame path, encoders and every pass — but only passes are held back: they are the part that
/// can be. A credit of one second's budget lets a burst through (the first frame's sweep of
/// tiles) before passes are spread out; a debt is at most one second's budget too, so a burst
/// of other work (a start-up, a file read as fast as it decodes) is forgotten within a second
/// or two of ending.
///
/// When the rest of the process alone uses more than the budget, passes would never run: a
/// pass then goes after ``longestWait`` anyway, so faces are found late rather than never.
package final class CPUBudget: Sendable {
    package let cores: Double
    /// The longest a pass waits for the budget.
    package let longestWait: Duration
    private let cpuTime: @Sendable () -> Duration
    private let clock = ContinuousClock()
    private struct State {
        var last: ContinuousClock.Instant
        var lastCPU: Duration
        /// CPU seconds the process may still use before passes are held back; below zero, a debt
        /// (either way at most one second's budget).
        var credit: Double
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - cores: the ceiling, in cores (> 0).
    ///   - cpuTime: the process's CPU time so far (a test gives its own clock).
    package init(
        cores: Double, longestWait: Duration = .seconds(2), cpuTime: @escaping @Sendable () -> Duration = CPUBudget.processCPUTime
    ) {
        self.cores = max(0.01, cores)
        self.longestWait = longestWait
        self.cpuTime = cpuTime
        state = Mutex(State(last: ContinuousClock.now, lastCPU: cpuTime(), credit: max(0.01, cores)))
    }

    /// `CLOCK_PROCESS_CPUTIME_ID`: every thread's CPU time, OpenCV's workers included.
    @Sendable package static func processCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// Whether the process is within the budget now: its CPU time since the last look, against
    /// the budget's rate over the wall time since, has not used up the credit.
    package func isWithin() -> Bool {
        state.withLock { s in
            let now = clock.now
            let cpu = cpuTime()
            let earned = cores * (now - s.last).seconds - (cpu - s.lastCPU).seconds
            s.credit = min(cores, max(-cores, s.credit + earned))
            s.last = now
            s.lastCPU = cpu
            return s.credit >= 0
        }
    }
}
