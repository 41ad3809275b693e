import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

@Suite("FaceTracker: the pass scheduler and the CPU budget")
struct PassBudgetTests {
    @Test(
        "trackers sharing a PassScheduler take turns: never more passes at once than its lanes, and with one lane each source's pass in turn, round robin"
    )
    func sharedScheduler() throws {
        for lanes in [1, 2] {
            let overlap = PassOverlap()
            let log = TurnLog()
            let scheduler = PassScheduler(lanes: lanes)
            let detectors = (0..<3).map { TurnDetector(id: $0, overlap: overlap, turns: log) }
            let trackers = try detectors.map { try FaceTracker(detector: $0, options: .backToBack, scheduler: scheduler) }
            let frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
            // Every camera wants a pass at once; then, as each pass ends, its camera's next frame
            // asks for the next (a camera faster than the passes).
            for tracker in trackers { _ = try tracker.faces(in: frame) }
            var ended = 0
            while ended < 12 {
                try #require(log.began.wait(timeout: .now() + 60) == .success, "a pass began: \(log.turns)")
                let id = log.turns[ended]
                detectors[id].release()
                trackers[id].waitUntilIdle()
                _ = try trackers[id].faces(in: frame)
                ended += 1
            }
            // Every gate opened before any tracker waits for its passes.
            for detector in detectors { detector.release() }
            for tracker in trackers { tracker.shutdown() }
            #expect(overlap.most <= lanes, "\(overlap.most) passes at once with \(lanes) lane(s)")
            #expect(Set(log.turns.prefix(12)) == [0, 1, 2], "every source had passes: \(log.turns)")
            if lanes == 1 {
                #expect(Array(log.turns.prefix(12)) == Array(repeating: [0, 1, 2], count: 4).flatMap { $0 }, "\(log.turns)")
            }
        }
    }

    /// A process CPU clock a test moves by hand.
    final class FakeCPU: Sendable {
        let spent = Mutex<Duration>(.zero)
        func spend(_ d: Duration) { spent.withLock { $0 += d } }
    }

    /// A detector whose every pass spends `cost` of `cpu` (no wall time) and notes how many
    /// frames old its frame is: the frame's first pixel is its number, `newest` the newest's.
    final class CPUCostDetector: FaceDetecting {
        let cpu: FakeCPU
        let cost: Duration
        let newest = Mutex(0)
        let ages = Mutex<[Int]>([])
        init(cpu: FakeCPU, cost: Duration) { (self.cpu, self.cost) = (cpu, cost) }
        var name: String { "cost" }
        var modelURL: URL { URL(fileURLWithPath: "/") }
        func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
            -> DetectionPass
        {
            let stamp = image.withUnsafeBytes(ofPlane: 0) { bytes, _ in Int(bytes[0]) }
            let now = newest.withLock { $0 }
            ages.withLock { $0.append((now - stamp + 256) % 256) }
            cpu.spend(cost)
            return DetectionPass(faces: [])
        }
    }

    /// A scheduler at half a core whose process is always far over it (5 s of other work at
    /// every look): passes go only after `longestWait`.
    func overBudget(longestWait: Duration, wall: FakeClock) -> PassScheduler {
        let busy = FakeCPU()
        return PassScheduler(
            lanes: 1,
            budget: CPUBudget(
                cores: 0.5, longestWait: longestWait,
                cpuTime: {
                    busy.spend(.seconds(5))
                    return busy.spent.withLock { $0 }
                }, wallTime: wall.now))
    }

    /// Feeds a background tracker on `scheduler` a frame every 10 ms of `wall` for `seconds`,
    /// each pass spending `cost` of `cpu` and ending before the next frame: its statistics, the
    /// wall time, and how many frames old each pass's frame was when the pass began.
    func runTracker(on scheduler: PassScheduler, wall: FakeClock, cpu: FakeCPU, cost: Duration, seconds: Double) throws -> (
        PassStatistics, Double, [Int]
    ) {
        let detector = CPUCostDetector(cpu: cpu, cost: cost)
        let tracker = try FaceTracker(detector: detector, options: .backToBack, scheduler: scheduler, policy: .standard, clock: wall.now)
        var frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
        let start = wall.now()
        var n = 0
        while (wall.now() - start).seconds < seconds {
            n += 1
            detector.newest.withLock { $0 = n % 256 }
            frame.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in bytes[0] = UInt8(n % 256) }
            _ = try tracker.faces(in: frame)
            tracker.waitUntilIdle()
            wall.advance(.milliseconds(10))
        }
        return (tracker.statistics, (wall.now() - start).seconds, detector.ages.withLock { $0 })
    }

    @Test(
        "a CPU budget holds passes back: at half a core, passes of 0.1 s of CPU spend at most the budget over the run (plus its one-second credit), wait for it, and each runs on the frame of its moment; with none they run on every frame"
    )
    func cpuBudget() throws {
        let cpu = FakeCPU()
        let clock = FakeClock()
        let budgeted = PassScheduler(
            lanes: 1,
            budget: CPUBudget(cores: 0.5, longestWait: .seconds(10), cpuTime: { cpu.spent.withLock { $0 } }, wallTime: clock.now))
        let (stats, wall, ages) = try runTracker(on: budgeted, wall: clock, cpu: cpu, cost: .milliseconds(100), seconds: 2)
        let spent = cpu.spent.withLock { $0 }.seconds
        // The credit (0.5 s) lets the first passes through at once; after that a pass of 0.1 s
        // comes every 0.2 s. Spent: at most the credit, the budget's rate (over the run and the
        // tracker's making) and one pass over.
        #expect(spent <= 0.5 + 0.5 * (wall + 0.1) + 0.1 && spent >= 0.5 + 0.25 * wall, "\(spent) s in \(wall) s")
        #expect(stats.budgetWaitSeconds >= 0.25 * wall, "\(stats.budgetWaitSeconds)")
        // Held back before the frame is taken, never after: a pass's frame is the newest one (a
        // pass that waited with its frame would be about 20 frames behind).
        #expect(!ages.isEmpty && ages.allSatisfy { $0 == 0 }, "\(ages)")
        let free = FakeCPU()
        let (freeStats, _, _) = try runTracker(
            on: PassScheduler(lanes: 1), wall: FakeClock(), cpu: free, cost: .milliseconds(100), seconds: 0.5)
        #expect(freeStats.budgetWaitSeconds == 0 && freeStats.passes >= 49, "a pass on every frame: \(freeStats)")
        // When the rest of the process alone is over the budget, a pass still goes after the
        // longest wait: found late, never starved.
        let starvedClock = FakeClock()
        let starved = overBudget(longestWait: .milliseconds(200), wall: starvedClock)
        let (starvedStats, starvedWall, _) = try runTracker(on: starved, wall: starvedClock, cpu: FakeCPU(), cost: .zero, seconds: 1)
        let waitsEnded = starvedStats.passes
        #expect(waitsEnded >= 2 && Double(waitsEnded) <= starvedWall / 0.2 + 1, "\(starvedStats.passes) in \(starvedWall) s")
        #expect(starvedStats.budgetWaitSeconds >= 0.2 * Double(waitsEnded - 1), "\(starvedStats.budgetWaitSeconds)")
    }

    @Test(
        "the budget's credit: passes admitted and not finished count at their estimate, so trackers sharing it are not all let through on one credit; a debt is at most the longest wait's budget"
    )
    func budgetCredit() throws {
        let cpu = FakeCPU()
        let clock = FakeClock()
        let budget = CPUBudget(cores: 1, longestWait: .milliseconds(200), cpuTime: { cpu.spent.withLock { $0 } }, wallTime: clock.now)
        // A credit of one second's budget (1 s; never more, however long the test is held up):
        // two passes expected to take 0.6 s each get through on it, a third not until one ends.
        #expect(budget.admit(estimate: 0.6) && budget.admit(estimate: 0.6))
        #expect(!budget.admit(estimate: 0.6))
        budget.release(0.6)
        #expect(budget.admit(estimate: 0.6))
        budget.release(0.6)
        budget.release(0.6)
        // 100 s of other work: a debt of at most 0.2 s (the longest wait's budget), paid in 0.2 s.
        cpu.spend(.seconds(100))
        #expect(!budget.admit(estimate: 0))
        clock.advance(.milliseconds(300))
        #expect(budget.admit(estimate: 0), "a burst of other work is forgotten once the longest wait has passed")
    }

    @Test("a sweep's job's CPU is not what the next pass is expected to cost: the next admission sets a typical pass's aside")
    func sweepNotTheEstimate() throws {
        let lane = FakeCPU()
        // Lanes run on the test's thread as they start: each pass has ended when run() returns.
        let scheduler = PassScheduler(
            lanes: 1, budget: CPUBudget(cores: 100, cpuTime: { .zero }), passCPU: { lane.spent.withLock { $0 } },
            startLane: { $0() })
        func pass(costing cost: Duration, typical: Bool) throws {
            let admission = try #require(scheduler.admit(waitingSince: .now, now: .now))
            let done = Mutex(false)
            scheduler.run(admission, typical: typical, { lane.spend(cost) }, done: { done.withLock { $0 = true } })
            #expect(done.withLock { $0 })
        }
        try pass(costing: .milliseconds(100), typical: true)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.1)
        try pass(costing: .milliseconds(900), typical: false)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.1, "not the sweep's 0.9 s")
        try pass(costing: .milliseconds(200), typical: true)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.2)
    }

    @Test("a pass the budget is holding back counts in budgetWaitSeconds while it is held, not only once it starts")
    func openHoldCounted() throws {
        let clock = FakeClock()
        let tracker = try FaceTracker(
            detector: CPUCostDetector(cpu: FakeCPU(), cost: .zero), options: .backToBack,
            scheduler: overBudget(longestWait: .seconds(60), wall: clock), policy: .standard, clock: clock.now)
        let frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
        for _ in 0..<50 {
            _ = try tracker.faces(in: frame)
            clock.advance(.milliseconds(10))
        }
        let statistics = tracker.statistics
        // Held from the first frame to now (the last frame, and 10 ms since).
        #expect(statistics.passes == 0 && statistics.budgetWaitSeconds == 0.5, "\(statistics)")
    }
}
