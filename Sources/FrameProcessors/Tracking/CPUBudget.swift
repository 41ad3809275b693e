import FrameCore
import Glibc
import Synchronization

/// A ceiling on the CPU the process uses, in cores' worth (1.5: on average at most one and a
/// half cores' CPU time a wall-clock second), that a ``PassScheduler`` keeps its passes under:
/// a pass waits until the process is back within the budget. What counts is the whole
/// process's CPU time, as `top` shows it — the frame path, encoders and every pass — but only
/// passes wait: they are the part that can. A credit of one second's budget lets a burst
/// through (the first frame's sweep of tiles) before passes are spread out.
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
        /// CPU seconds the process may still use before a pass waits (at most one second's budget).
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

    private static func sleep(seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(seconds.truncatingRemainder(dividingBy: 1) * 1e9))
        var left = timespec()
        while nanosleep(&request, &left) == -1 && errno == EINTR { request = left }
    }

    /// Blocks until the process is within the budget (or ``longestWait`` has passed); returns how
    /// long it waited.
    package func waitForCredit() -> Duration {
        let start = clock.now
        while true {
            let debt = state.withLock { s -> Double in
                let now = clock.now
                let cpu = cpuTime()
                s.credit = min(cores, s.credit + cores * (now - s.last).seconds - (cpu - s.lastCPU).seconds)
                s.last = now
                s.lastCPU = cpu
                return -s.credit
            }
            let waited = clock.now - start
            if debt <= 0 || waited >= longestWait { return waited }
            // Until the debt is paid at the budget's rate, re-checked at least every 100 ms (the
            // frame path goes on spending meanwhile).
            let pause = min(debt / cores, 0.1, (longestWait - waited).seconds)
            Self.sleep(seconds: pause)
        }
    }
}
