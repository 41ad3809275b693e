import Dispatch
import Foundation
import FrameKit
import Synchronization
import Testing

@testable import FrameProcessors

/// A detector whose passes wait at a gate the test opens: `entered` is signalled as a pass
/// starts, `ended` counts the passes that returned. No face.
final class PassGate: FaceDetecting {
    let entered = DispatchSemaphore(value: 0)
    private let gate = PassHold()
    private let counts = Mutex((calls: 0, ended: 0))
    var calls: Int { counts.withLock { $0.calls } }
    var ended: Int { counts.withLock { $0.ended } }
    var name: String { "gated" }
    var modelURL: URL { URL(fileURLWithPath: "/") }
    /// Lets one waiting pass (or the next to come) through.
    func open() { gate.release() }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        counts.withLock { $0.calls += 1 }
        entered.signal()
        gate.pass()
        counts.withLock { $0.ended += 1 }
        return DetectionPass(faces: [])
    }
}

/// What other threads may do while a pass runs, and the end of a tracker's passes.
@Suite("FaceTracker: statistics and reset never wait for a pass; shutdown ends the passes", .timeLimit(.minutes(2)))
struct TrackerThreadingTests {
    let frame: PixelBuffer
    init() throws { frame = try PixelBuffer(width: 320, height: 240, format: .gray8) }

    @Test("inline, a pass under way on the frame path: statistics and reset() return without waiting for it; the next frame starts over")
    func noLockAcrossAPass() throws {
        let detector = PassGate()
        let tracker = try FaceTracker(detector: detector, options: .init(schedule: .inline(interval: 1)))
        let done = DispatchGroup()
        let frame = self.frame
        DispatchQueue.global().async(group: done) { _ = try? tracker.faces(in: frame) }
        try #require(detector.entered.wait(timeout: .now() + 60) == .success) // the first frame's pass holds the frame path
        // Were either to take the frame path's lock, this would wait for the gate, which opens
        // only after: the suite's time limit would fail it.
        #expect(tracker.statistics.passes == 0)
        tracker.reset()
        #expect(detector.ended == 0, "the pass is still under way")
        detector.open()
        try #require(done.wait(timeout: .now() + 60) == .success)
        #expect(tracker.statistics.passes == 0, "the frame under way publishes nothing over the reset")
        // The reset asked during that frame: the next frame is a first frame again (a pass on it).
        DispatchQueue.global().async(group: done) { _ = try? tracker.faces(in: frame) }
        try #require(detector.entered.wait(timeout: .now() + 60) == .success)
        detector.open()
        try #require(done.wait(timeout: .now() + 60) == .success)
        #expect(detector.calls == 2 && tracker.statistics.passes == 1, "\(detector.calls) \(tracker.statistics)")
    }

    @Test("background: shutdown() returns once the pass under way has ended, and no pass starts after it; frames are still taken")
    func shutdownEndsPasses() throws {
        let detector = PassGate()
        let tracker = try FaceTracker(detector: detector, options: .init(schedule: .background))
        _ = try tracker.faces(in: frame) // hands the first pass to the worker
        try #require(detector.entered.wait(timeout: .now() + 60) == .success)
        DispatchQueue.global().async { detector.open() }
        tracker.shutdown()
        #expect(detector.ended == 1, "shutdown() waited for the pass")
        for _ in 0..<5 { #expect(try tracker.faces(in: frame).isEmpty) }
        tracker.shutdown()
        #expect(detector.calls == 1, "no pass after shutdown()")
    }

    @Test(
        "a scheduler's jobs start in the order they were asked for, on no more lanes than it has: with one lane held inside its job, the other runs the rest one after another, first asked first"
    )
    func schedulerIsFIFO() throws {
        let lanes = LanesByHand()
        let scheduler = PassScheduler(lanes: 2, budget: nil, startLane: lanes.starter)
        let admission = try #require(scheduler.admit(waitingSince: .now, now: .now))
        let order = Mutex<[Int]>([])
        let done = Mutex(0)
        @Sendable func ask(_ job: Int, then: @escaping @Sendable () -> Void = {}) {
            scheduler.run(
                admission,
                {
                    order.withLock { $0.append(job) }
                    then()
                }, done: { done.withLock { $0 += 1 } })
        }
        ask(0) {
            // The first lane, held inside job 0: every other job is asked for now, and the
            // second lane runs them all before job 0 ends.
            for job in 1...20 { ask(job) }
            #expect(lanes.started == 2, "a second lane for the jobs waiting, never a third")
            #expect(lanes.runNext())
            #expect(order.withLock { $0 } == Array(0...20), "the other lane ran them, first asked first")
        }
        #expect(lanes.started == 1)
        #expect(lanes.runNext())
        #expect(done.withLock { $0 } == 21 && !lanes.runNext())
        // Both lanes ended with the queue empty: the next job starts one again.
        ask(21)
        #expect(lanes.started == 3 && lanes.runNext())
        #expect(order.withLock { $0 } == Array(0...21) && done.withLock { $0 } == 22)
    }
}

/// The lanes a ``PassScheduler`` starts, run by the test on its own thread when it says.
final class LanesByHand: Sendable {
    private let lanes = Mutex((pending: [@Sendable () -> Void](), started: 0))
    /// Lanes the scheduler has started so far (run or not).
    var started: Int { lanes.withLock { $0.started } }
    var starter: PassScheduler.LaneStarter {
        { lane in
            self.lanes.withLock {
                $0.pending.append(lane)
                $0.started += 1
            }
        }
    }

    /// Runs the oldest lane started and not yet run (false: none).
    func runNext() -> Bool {
        guard let lane = lanes.withLock({ $0.pending.isEmpty ? nil : $0.pending.removeFirst() }) else { return false }
        lane()
        return true
    }
}
