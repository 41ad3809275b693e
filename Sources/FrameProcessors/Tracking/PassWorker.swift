import Dispatch
import FrameCore
import Synchronization

/// Runs one pass at a time on its own queue and keeps its results until taken.
final class PassWorker: Sendable {
    private struct State {
        var busy = false
        /// ``shutdown()`` was called: no job is taken any more.
        var closed = false
        var results: [PassResult] = []
        var failure: FaceDetectorError? = nil
        var generation = 0
    }
    private let detector: any FaceDetecting
    private let floor: Double
    let scheduler: PassScheduler // maybe shared with other trackers' workers
    private let state = Mutex(State())
    private let passes = DispatchGroup()

    init(detector: any FaceDetecting, floor: Double, scheduler: PassScheduler) {
        self.detector = detector
        self.floor = floor
        self.scheduler = scheduler
    }

    func waitUntilIdle() { passes.wait() }

    /// Takes no more jobs and waits for the one under way. exit() runs C++ static destructors
    /// (OpenCV's and XNNPACK's among them) while other threads go on: a pass still inside
    /// OpenCV then crashed (seen as SIGSEGV at the end of `framekit detect` on a camera). The
    /// owner calls this before the process exits: ``FaceTracker/shutdown()``.
    /// Whether ``shutdown()`` was called: no job is taken.
    var isClosed: Bool { state.withLock { $0.closed } }

    func shutdown() {
        state.withLock { $0.closed = true }
        passes.wait()
    }

    /// Runs `looks` over `image` in turn, back to back on one lane, when the scheduler lets
    /// them: each look's result is given as soon as it is ready. Every tile in one job is the
    /// tiles' sweep (`sweep`, ``FaceTracker/Options/sweepAtOnce``): its last result ends the
    /// sweep, and its CPU is not what the next pass is expected to cost.
    func submit(
        _ image: PixelBuffer, frame: Int, looks: [PassLook], sweep: Bool = false, closer: CloserLooks? = nil,
        admission: PassScheduler.Admission
    ) {
        guard !looks.isEmpty else { return }
        let generation = state.withLock { s -> Int? in
            guard !s.closed else { return nil }
            s.busy = true
            // Entered in the same lock as `closed` is read: shutdown() waits for this job.
            self.passes.enter()
            return s.generation
        }
        guard let generation else { return }
        let passes = self.passes
        scheduler.run(admission, typical: !sweep) { [self] in
            // One look after another; the last, or one that ends the job (a reset meanwhile, a
            // failure), frees the worker in the same lock as its result: a frame never finds
            // it free with a result not yet given.
            for (i, look) in looks.enumerated() {
                let last = i == looks.count - 1
                // A job let go while it waited for its lane, or between its looks (a reset, a
                // start over, a shutdown): no network runs for a result nobody will take.
                let wanted = self.state.withLock { s in
                    let wanted = s.generation == generation && !s.closed
                    if !wanted { s.busy = false }
                    return wanted
                }
                guard wanted else { break }
                let started = ContinuousClock.now
                let outcome = Result { () throws(FaceDetectorError) -> DetectionPass in
                    try look.run(detector, on: image, candidatesDownTo: floor, closer: closer)
                }
                let latency = ContinuousClock.now - started
                let goOn = self.state.withLock { s in
                    var goOn = false
                    if s.generation == generation {
                        switch outcome {
                        case .success(let pass):
                            s.results.append(
                                PassResult(frame: frame, look: look, pass: pass, latency: latency, endsSweep: sweep && last))
                            goOn = true
                        case .failure(let error): s.failure = error
                        }
                    }
                    if last || !goOn { s.busy = false }
                    return goOn
                }
                if !goOn { break }
            }
        } done: {
            passes.leave()
        }
    }

    /// The results of passes finished since the last call, oldest first, and whether a pass is
    /// still under way.
    func poll() -> (results: [PassResult], busy: Bool) {
        state.withLock { s in
            defer { s.results = [] }
            return (s.results, s.busy)
        }
    }

    func takeFailure() -> FaceDetectorError? {
        state.withLock { s in
            defer { s.failure = nil }
            return s.failure
        }
    }

    /// Results of passes already under way are thrown away (after a reset).
    func discardResult() {
        state.withLock { s in
            s.generation += 1
            s.results = []
            s.failure = nil
        }
    }
}
