import FrameCore
import Glibc
import Synchronization

/// A ceiling on the CPU the process uses, in cores' worth (1.5: on average at most one and a
/// half cores' CPU time a wall-clock second), that a ``PassScheduler`` keeps its passes under:
/// a tracker starts no pass while the process is over the budget, and starts one on the first
/// frame after it is back within it, so the pass is made from a frame of that moment, not from
/// one kept while waiting. What counts is the whole process's CPU time, as `top` shows it — the
/// frame path, encoders and every pass — but only passes are held back: they are the part that
/// can be. A credit of one second's budget lets a burst through (the first frame's sweep of
/// tiles) before passes are spread out. A pass admitted and not yet finished counts at the CPU
/// the last pass took, so trackers sharing the budget are not all let through on the same
/// credit. A debt is at most ``longestWait``'s budget: a burst of other work (a start-up, a
/// file read as fast as it decodes) is forgotten within that long of ending, and a pass costing
/// more than that is not forgotten in part (passes come every ``longestWait`` at the least).
///
/// When the rest of the process alone uses more than the budget, passes would never run: a
/// pass then goes after ``longestWait`` anyway, so faces are found late rather than never.
package final class CPUBudget: Sendable {
    package let cores: Double
    /// The longest a pass waits for the budget.
    package let longestWait: Duration
    private let cpuTime: @Sendable () -> Duration
    private let wallTime: @Sendable () -> ContinuousClock.Instant
    private struct State {
        var last: ContinuousClock.Instant
        var lastCPU: Duration
        /// CPU seconds the process may still use before passes are held back (at most one
        /// second's budget); below zero, a debt (at most the longest wait's budget).
        var credit: Double
        /// CPU seconds set aside for passes admitted and not yet finished.
        var reserved = 0.0
    }
    private let state: Mutex<State>

    /// - Parameters:
    ///   - cores: the ceiling, in cores (> 0).
    ///   - cpuTime: the process's CPU time so far, `wallTime` the time now (a test gives its own
    ///     clocks and moves them).
    package init(
        cores: Double, longestWait: Duration = .seconds(2), cpuTime: @escaping @Sendable () -> Duration = CPUBudget.processCPUTime,
        wallTime: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        // A budget of no CPU would hold every pass its longest wait: the least is a hundredth of a core.
        self.cores = max(Self.leastCores, cores)
        self.longestWait = longestWait
        self.cpuTime = cpuTime
        self.wallTime = wallTime
        state = Mutex(State(last: wallTime(), lastCPU: cpuTime(), credit: self.cores))
    }

    static let leastCores = 0.01

    /// `CLOCK_PROCESS_CPUTIME_ID`: every thread's CPU time, OpenCV's workers included.
    @Sendable package static func processCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// `CLOCK_THREAD_CPUTIME_ID`: the calling thread's CPU time (a pass's, on its lane).
    @Sendable package static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    /// Admits a pass if the process is within the budget now — its CPU time since the last look,
    /// against the budget's rate over the wall time since, and the passes admitted and not yet
    /// finished, have not used up the credit — setting `estimate` CPU seconds aside for it until
    /// ``release(_:)``.
    package func admit(estimate: Double) -> Bool {
        state.withLock { s in
            let now = wallTime()
            let cpu = cpuTime()
            let earned = cores * (now - s.last).seconds - (cpu - s.lastCPU).seconds
            s.credit = min(cores, max(-cores * longestWait.seconds, s.credit + earned))
            s.last = now
            s.lastCPU = cpu
            guard s.credit - s.reserved >= 0 else { return false }
            s.reserved += max(0, estimate)
            return true
        }
    }

    /// Gives back what ``admit(estimate:)`` set aside, once the pass has finished (its CPU is in
    /// the process's by then).
    package func release(_ estimate: Double) {
        state.withLock { $0.reserved = max(0, $0.reserved - max(0, estimate)) }
    }

    /// Admits a pass that has waited ``longestWait``, setting `estimate` aside as
    /// ``admit(estimate:)`` does.
    package func force(estimate: Double) {
        state.withLock { $0.reserved += max(0, estimate) }
    }
}
