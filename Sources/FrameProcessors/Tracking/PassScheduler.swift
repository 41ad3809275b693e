import Dispatch
import Synchronization

/// Where a ``FaceTracker``'s background passes run, shared by every tracker given the same
/// scheduler: at most `lanes` passes at once, in the order they were asked for. Each tracker has
/// at most one pass queued or running, so that order is round robin between them: with four
/// cameras each one's turn comes after the others', and the CPU runs `lanes` networks, not four
/// fighting for the same cores (each pass slower, every camera's faces later, the frame path
/// starved). A tracker made without one has its own (one lane).
///
/// With a CPU budget, a tracker also starts no pass while the process is over it (`CPUBudget`):
/// the passes come less often on a machine shared with other work, each on the frame of the
/// moment it may start, and the time held back is in the tracker's
/// ``PassStatistics/budgetWaitSeconds``.
///
/// ```swift
/// let scheduler = PassScheduler(lanes: 2)
/// let trackers = try detectors.map { try FaceTracker(detector: $0, options: .init(schedule: .background), scheduler: scheduler) }
/// ```
public final class PassScheduler: Sendable {
    public let lanes: Int
    /// The ceiling on the process's CPU, in cores' worth; nil: none.
    public var cpuBudget: Double? { budget?.cores }
    /// Starts a lane: `drain` run where lanes run (a thread of the scheduler's dispatch queue).
    private let startLane: LaneStarter
    /// Passes asked for and not started, oldest first, and how many lanes are draining them.
    private let waiting = Mutex(Waiting())
    private let budget: CPUBudget?
    /// The lane thread's CPU seconds in the last pass: what an admitted pass is expected to
    /// cost (all of it with one thread a pass, ``InferenceThreads``; the lane's share with more).
    private let lastPassCPU = Mutex(0.0)
    private let passCPU: @Sendable () -> Duration

    /// A pass let through, with the CPU set aside for it.
    package struct Admission: Sendable {
        package let reserved: Double
    }

    /// - Parameters:
    ///   - lanes: passes run at once (at least 1). One network may use a thread per CPU
    ///     (``InferenceThreads``), but not every core all the time: on a 2-core machine two lanes ran more
    ///     passes a second than one, more again with one thread a pass (``InferenceThreads``;
    ///     docs/performance.md).
    ///   - cpuBudget: at most this many cores' worth of CPU for the whole process, on average;
    ///     passes are held back for it (nil: passes run as soon as a lane is free).
    public convenience init(lanes: Int = 1, cpuBudget: Double? = nil) {
        self.init(lanes: lanes, budget: cpuBudget.map { CPUBudget(cores: $0) })
    }

    /// How a scheduler starts a lane: runs the lane's loop, now or later, on some thread.
    package typealias LaneStarter = @Sendable (_ lane: @escaping @Sendable () -> Void) -> Void

    /// A scheduler keeping its passes under `budget` (a test's, with its own clocks: `passCPU`
    /// is a pass's lane thread's CPU time). `startLane`: where its lanes run (nil: a dispatch
    /// queue's threads; a test's runs them on its own thread when it says, so the test needs no
    /// thread, wait or timeout to see what a lane does).
    package init(
        lanes: Int, budget: CPUBudget?, passCPU: @escaping @Sendable () -> Duration = CPUBudget.threadCPUTime,
        startLane: LaneStarter? = nil
    ) {
        self.budget = budget
        self.passCPU = passCPU
        self.lanes = max(1, lanes)
        let queue = DispatchQueue(
            label: "framekit.face-tracker.passes", qos: .userInitiated, attributes: self.lanes > 1 ? .concurrent : [])
        self.startLane = startLane ?? { lane in queue.async(execute: lane) }
    }

    /// Whether a pass a tracker has wanted since `since` may start at `now` (nil: not yet): the
    /// process is within the budget, counting passes admitted and not finished at the last
    /// pass's CPU, or the pass has waited the budget's longest wait (always, without one).
    package func admit(waitingSince since: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Admission? {
        guard let budget else { return Admission(reserved: 0) }
        let estimate = lastPassCPU.withLock { $0 }
        if budget.admit(estimate: estimate) { return Admission(reserved: estimate) }
        guard now - since >= budget.longestWait else { return nil }
        budget.force(estimate: estimate)
        return Admission(reserved: estimate)
    }

    /// Runs an admitted `pass` when a lane is free (first asked, first run), gives back what its admission set
    /// aside, then calls `done` — once the lane has let go of the pass closure. `typical`:
    /// whether its CPU is what the next pass is expected to cost (a tracker's sweep of every
    /// tile in one job, a few passes' worth once a stream, is not: the next admission would set
    /// that much aside).
    /// (A tracker waiting for its passes to end is waiting for its detector to be free too:
    /// a closure let go after its pass had said it was over kept a detector's networks, ~150
    /// MB at 1080p, alive past the end of a run, now and then into the next preset's peak
    /// memory in `framekit profile`.)
    package func run(
        _ admission: Admission, typical: Bool = true, _ pass: @escaping @Sendable () -> Void, done: @escaping @Sendable () -> Void
    ) {
        let job = Job(admission: admission, typical: typical, pass: PassHolder(pass), done: done)
        // A lane is started only when fewer than `lanes` are draining the queue: no thread
        // ever waits for a lane, and the jobs leave the queue in the order they came.
        let startsLane = waiting.withLock { w -> Bool in
            w.jobs.append(job)
            guard w.lanes < lanes else { return false }
            w.lanes += 1
            return true
        }
        if startsLane { startLane { [self] in drain() } }
    }

    /// One lane: runs the oldest job waiting until none is left.
    private func drain() {
        while let job = waiting.withLock({ w -> Job? in
            guard !w.jobs.isEmpty else {
                w.lanes -= 1
                return nil
            }
            return w.jobs.removeFirst()
        }) {
            let start = passCPU()
            job.pass.run()
            let spent = (passCPU() - start).seconds
            if job.typical { lastPassCPU.withLock { $0 = spent } }
            budget?.release(job.admission.reserved)
            job.done()
        }
    }

    private struct Job: Sendable {
        let admission: Admission
        let typical: Bool
        let pass: PassHolder
        let done: @Sendable () -> Void
    }

    private struct Waiting: ~Copyable {
        var jobs: [Job] = []
        var lanes = 0
    }
}

/// A pass closure that is let go as soon as it has run.
private final class PassHolder: Sendable {
    private let pass: Mutex<(@Sendable () -> Void)?>

    init(_ pass: @escaping @Sendable () -> Void) { self.pass = Mutex(pass) }

    func run() {
        // Taken out first, run, and released at the end of this call, not when the queue
        // lets go of the block that holds this.
        let pass = self.pass.withLock { slot -> (@Sendable () -> Void)? in
            defer { slot = nil }
            return slot
        }
        pass?()
    }
}
