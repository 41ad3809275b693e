import FrameCore
import Synchronization

/// Real-time face detection on video. A detector (by default the CNN) runs a *pass* over the
/// whole frame now and then; between passes every face found is carried from frame to frame
/// by normalised cross-correlation of a small patch of it (a few hundred pixels, ~0.1 ms a
/// face), which holds under noise, defocus and exposure drift. A pass confirms and corrects
/// the tracks, adds new faces and ends tracks no pass has confirmed for a while. A face whose
/// patch is no longer found (it jumped, or was covered) calls for a pass at once.
///
/// Two thresholds, as ByteTrack has them: a new face needs the detector's own confidence,
/// while a face already established (reported by ``Options/establishedAfter`` passes) is
/// confirmed by a weaker box on it, down to ``Options/confirmationThreshold``. A face the
/// network scores less as it shrinks, turns or blurs is kept; a weak box nowhere near a
/// followed face is never reported, and a box the network reported once or twice (a
/// distractor, a box beside a face) is not kept alive by weaker ones.
///
/// Two schedules (``Schedule``): passes on the frame path itself (results identical on every
/// run, for files processed as fast as they are read), or on a thread of their own (the frame
/// path never waits on the network, for live sources).
///
/// Frames must be given in order; one tracker follows one video. Thread-safe: ``statistics``
/// and ``reset()`` may be called from any thread and never wait for a pass; calls of
/// ``faces(in:)`` are serialised. On the background schedule, call ``shutdown()`` before the
/// process exits (the C++ libraries' statics are torn down at exit, under a pass still running).
///
/// The parts, each in its own file: ``Options`` (the knobs), `TrackerPolicy` (every constant),
/// `Track` (a face followed by its patch), `TrackAssociation` (a pass's faces joined with the
/// tracks), `LookPlanner` (what to look at next), `CameraMotion` and `SceneCut` (what the scene
/// does), `PassWorker` and ``PassScheduler`` (passes on other threads).
public final class FaceTracker: Sendable {
    public let options: Options
    public let detector: any FaceDetecting
    package let policy: TrackerPolicy
    /// The time now, for the CPU budget's holds.
    let clock: @Sendable () -> ContinuousClock.Instant
    /// The frame path's state: held by ``faces(in:)`` (and its passes, inline) only.
    private let state: Mutex<TrackerState>
    /// What other threads read and ask for, never held across a pass.
    private let shared = Mutex(Shared())
    let worker: PassWorker?
    /// Whether the first pass runs on the first frame (``Options/firstPassOnFrameWithin``):
    /// set by ``prepare(width:height:)``, kept across ``reset()``.
    private let firstPassOnFrame = Atomic<Bool>(false)

    private struct Shared {
        /// The pass figures as of the last frame, and since when a pass has been held back.
        var statistics = PassStatistics()
        var passWantedSince: ContinuousClock.Instant? = nil
        /// ``reset()`` was called: the next frame starts from nothing.
        var resetAsked = false
    }

    /// - Parameters:
    ///   - detector: what runs the passes.
    ///   - options: the schedule and the tracking thresholds.
    ///   - scheduler: where background passes run; trackers given the same one take turns on
    ///     it (several cameras: ``PassScheduler``). nil: a queue of its own.
    public convenience init(detector: any FaceDetecting, options: Options = Options(), scheduler: PassScheduler? = nil)
        throws(FaceDetectorError)
    {
        try self.init(detector: detector, options: options, scheduler: scheduler, policy: .standard)
    }

    /// A tracker under another policy (a test's, an ablation's), and with another clock for the
    /// time a pass is held back by the CPU budget (a test's, which it moves by hand).
    package init(
        detector: any FaceDetecting, options: Options = Options(), scheduler: PassScheduler? = nil, policy: TrackerPolicy,
        clock: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) throws(FaceDetectorError) {
        try options.validate()
        self.clock = clock
        self.detector = detector
        self.options = options
        self.policy = policy
        state = Mutex(TrackerState(policy: policy))
        self.worker =
            options.schedule == .background
            ? PassWorker(detector: detector, floor: options.candidateFloor, scheduler: scheduler ?? PassScheduler()) : nil
    }

    deinit { worker?.shutdown() }

    /// The faces in the next frame of the video, in its pixel coordinates.
    public func faces(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        let resetAsked = shared.withLock { s in
            defer { s.resetAsked = false }
            return s.resetAsked
        }
        return try state.withLock { (s) throws(FaceDetectorError) -> [Face] in
            if resetAsked {
                // From nothing, but the frame count goes on: a pass the last frame started
                // after reset() was asked (its result kept under the new generation) is from a
                // frame up to `startedOver`, and let go when it comes.
                s.startOver()
                (s.statistics, s.passWantedSince, s.sceneCut) = (PassStatistics(), nil, SceneCut(policy: policy))
                worker?.discardResult()
            }
            // The figures other threads read, as of this frame, however it ends — unless a
            // reset came meanwhile: they stay cleared until the next frame (no old figure comes back).
            defer {
                let (statistics, wanted) = (s.statistics, s.passWantedSince)
                shared.withLock {
                    guard !$0.resetAsked else { return }
                    $0.statistics = statistics
                    $0.passWantedSince = wanted
                }
            }
            let gray: PixelBuffer
            do throws(PixelBufferError) { gray = try s.grayView(of: image) } catch { throw .pixelBuffer(error) }
            // A frame of another size (a folder of photos of different sizes) or another scene
            // (``Options/cutsFromImage``) is a new scene: nothing of the old is carried into it.
            let otherScene = options.cutsFromImage && s.sceneCut.isCut(gray)
            if otherScene || s.frameSize.map({ $0 != (image.width, image.height) }) == true {
                s.startOver()
                // A pass under way on the old scene runs on, its result let go (`startedOver`);
                // one already done is let go here.
                worker?.discardResult()
            }
            s.frameSize = (image.width, image.height)
            s.frame += 1

            // 1. Every track, carried into this frame. A face lost in this frame calls for a
            //    pass; one lost earlier already had it (a small face a whole-frame pass cannot
            //    judge waits for its tile: it must not call for a pass on every frame).
            //    A face lost earlier may still be looked for a while (``Options/coastFrames``).
            var carried = Carried()
            for i in s.tracks.indices {
                let wasFound = s.tracks[i].isFound
                let found = s.tracks[i].step(
                    in: gray, margin: options.searchMargin, minCorrelation: options.minCorrelation, coast: options.coastFrames,
                    revival: options.revivalCorrelation, policy: policy)
                if !found, wasFound {
                    carried.lost.append(s.tracks[i].box)
                    if !s.tracks[i].isLeaving(width: gray.width, height: gray.height, policy: policy) {
                        carried.lostInView.append(s.tracks[i].box)
                    }
                }
                if found, !wasFound { carried.revived.append(i) }
            }
            s.endCoasting(revived: carried.revived, coast: options.coastFrames)

            if options.quietStretches { s.camera.step(in: gray, minCorrelation: options.minCorrelation) }

            // 2. Passes: over the whole frame, and (where the detector shrinks the frame) over
            //    its tiles in turn, for faces too small to be seen in the whole.
            if options.tiles {
                s.planner.planTiles(
                    width: image.width, height: image.height, scale: detector.passScale(width: image.width, height: image.height))
            }
            switch options.schedule {
            case .inline(let interval): try inlinePasses(interval: interval, image: image, gray: gray, carried: carried, state: &s)
            case .background: try backgroundPasses(image: image, gray: gray, carried: carried, state: &s)
            }

            // 3. Lost faces are dropped once a pass has judged them missed or they are no longer
            //    looked for. A pass that did not confirm a track outranks the correlation: the
            //    track is kept (the network may miss a face once) but not reported until a pass
            //    confirms it again.
            s.tracks.removeAll { !$0.isFound && ($0.missedPasses > 0 || $0.hasGone) }
            let w = image.width
            let h = image.height
            return s.tracks.filter { $0.isFound && $0.missedPasses == 0 }.map { track in
                var face = track.face
                face.bounds = face.bounds.clamped(width: w, height: h)
                return face
            }
        }
    }

    /// What carrying the tracks into a frame found: the faces lost in it (`lostInView`: those
    /// not leaving at an edge) and the lost faces found again.
    struct Carried {
        var lost: [Box] = []
        var lostInView: [Box] = []
        var revived: [Int] = []
    }

    /// Runs `look` on this frame and merges its faces at once (the inline schedule's passes,
    /// and the background schedule's first pass on its first frame); returns whether it changed
    /// what is tracked.
    func pass(_ look: PassLook, on image: PixelBuffer, gray: PixelBuffer, state s: inout TrackerState) throws(FaceDetectorError) -> Bool {
        let started = ContinuousClock.now
        let found = try look.run(detector, on: image, candidatesDownTo: options.candidateFloor, closer: s.closerLooks(options))
        let changed = s.merge(found, look: look, passFrame: s.frame, gray: gray, history: nil, options: options)
        s.statistics.recordPass(latency: ContinuousClock.now - started, age: 0)
        return changed
    }

    /// Gets the detector ready for frames of this size: its network for the whole frame, for a
    /// tile and for the edge a pan brings into view, as this tracker's
    /// passes will use them (a CNN sets a network up on its first run, which would otherwise
    /// delay the first passes of each kind and the first faces). On the background schedule it
    /// also times a whole-frame pass, which decides whether the first pass may run on the first
    /// frame (``Options/firstPassOnFrameWithin``). Optional: tracking works without it.
    public func prepare(width: Int, height: Int) throws(FaceDetectorError) {
        try detector.prepare(width: width, height: height)
        if options.schedule == .background, let within = options.firstPassOnFrameWithin {
            // The whole-frame pass's cost, its network set up: whether the first frame may wait
            // for it.
            let blank = try blankFrame(width: width, height: height)
            let started = ContinuousClock.now
            _ = try detector.pass(in: blank, candidatesDownTo: options.candidateFloor)
            firstPassOnFrame.store(ContinuousClock.now - started <= within, ordering: .relaxed)
        }
        let scale = detector.passScale(width: width, height: height)
        guard scale < policy.shrinkingScale else { return }
        let blank = try blankFrame(width: width, height: height)
        let plan = TilePlan(width: blank.width, height: blank.height, scale: scale, policy: policy)
        if options.tiles, let tile = plan.tiles.first {
            _ = try detector.pass(in: blank, region: tile, candidatesDownTo: options.candidateFloor)
            if options.edgeLooks > 0 && options.quietStretches, let strip = LookPlanner.edgeWidth(plan, policy: policy) {
                let edge = Rect(x: 0, y: 0, width: strip, height: blank.height)
                _ = try detector.pass(in: blank, region: edge, scale: plan.tileScale, candidatesDownTo: options.candidateFloor)
            }
        }
    }

    /// Whether the first pass may run on the frame path (``Options/firstPassOnFrameWithin``).
    var firstPassRunsOnFrame: Bool { firstPassOnFrame.load(ordering: .relaxed) }

    /// Waits for a pass under way on the background schedule to finish (returns at once on
    /// the inline schedule).
    public func waitUntilIdle() { worker?.waitUntilIdle() }

    /// Starts no more background passes and waits for the one under way: call it before the
    /// process exits (a pass still inside OpenCV or XNNPACK while exit tears their statics
    /// down crashes). Frames given afterwards are still tracked, by correlation only. Letting
    /// the tracker go does the same. Returns at once on the inline schedule.
    public func shutdown() { worker?.shutdown() }

    /// What the passes have cost so far and how late their faces arrived (background
    /// schedule; the inline schedule counts its passes, which are never late), as of the last
    /// frame. A pass the CPU budget is holding back now counts in
    /// ``PassStatistics/budgetWaitSeconds`` up to now, so the figure grows while the budget
    /// holds rather than in one step when it lets go. Never waits for a pass.
    public var statistics: PassStatistics {
        shared.withLock { s in
            var statistics = s.statistics
            if let wanted = s.passWantedSince { statistics.recordBudgetWait(clock() - wanted) }
            return statistics
        }
    }

    /// Forgets every track (a new video, a camera switch) from the next frame on: a frame under
    /// way ends as it began. Passes under way are let go now. Never waits for a pass.
    public func reset() {
        shared.withLock { $0 = Shared(resetAsked: true) }
        worker?.discardResult()
    }
}

/// Face tracking as a chain stage: `frame.faces` from a ``FaceTracker``.
public struct FaceTrackingProcessor: Processor {
    public let tracker: FaceTracker
    public var name: String { "detect" }
    public init(tracker: FaceTracker) { self.tracker = tracker }
    public func process(_ frame: inout SampleBuffer) throws {
        frame.faces = try tracker.faces(in: frame.pixelBuffer)
    }
}
