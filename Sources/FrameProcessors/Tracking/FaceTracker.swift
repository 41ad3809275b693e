import COpenCVShim
import Dispatch
import Foundation
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
/// Frames must be given in order; one tracker follows one video. Thread-safe, but calls are
/// serialised.
public final class FaceTracker: Sendable {
    public enum Schedule: Sendable, Equatable {
        /// A pass on every `interval`-th frame (further apart while passes change nothing:
        /// ``Options/quietInterval``), and on any frame where a tracked face was lost, run
        /// before the frame is returned. New faces large enough for a whole-frame pass are
        /// reported at most `interval - 1` frames after they appear, `quietInterval - 1` in a
        /// quiet scene, and under a sideways pan, away from the edge it brings into view,
        /// `(edgeLooks + 1) * interval - 1` (``Options/edgeLooks``).
        case inline(interval: Int)
        /// Passes back to back on a thread of their own, each on the newest frame (further
        /// apart while a still scene stays quiet: ``Options/quietInterval``); their faces join
        /// when ready, carried forward to the current frame through the frames in between.
        case background
    }

    /// The defaults were chosen on the corpus's tune split (`framekit-bench --suite tune`, see
    /// docs/performance.md), never on the split the figures are reported on.
    public struct Options: Sendable, Equatable {
        public var schedule: Schedule = .inline(interval: 4)
        /// The side (px) a tracked face is shrunk to for correlation.
        public var patchSize: Int = 24
        /// How far a face is searched for beyond where it was, as a fraction of its size (plus
        /// its last motion).
        public var searchMargin: Double = 0.5
        /// Below this correlation (−1…1) a face counts as lost in that frame.
        public var minCorrelation: Double = 0.7
        /// A track no pass confirms this many passes in a row is ended.
        public var maxMissedPasses: Int = 1
        /// A pass's face belongs to a track when their boxes overlap by at least this IoU.
        public var matchOverlap: Double = 0.3
        /// The lowest confidence of a box that confirms a face already tracked (below the
        /// detector's own threshold, which a new face needs); nil: only faces the detector
        /// reports confirm. Detectors without confidences (Haar) give no weaker boxes.
        public var confirmationThreshold: Double? = 0.05
        /// How many passes must have reported a face before weaker boxes may confirm it.
        public var establishedAfter: Int = 3
        /// Where the detector shrinks the frame for a pass (``FaceDetecting/passScale(width:height:)``
        /// below 0.9: CenterFace on frames larger than its input size), passes over tiles of the
        /// frame, half as shrunk, take turns with passes over the whole frame, so faces too small
        /// for the whole-frame pass (from about 20 px at 720p) are found and then tracked.
        public var tiles: Bool = true
        /// How far apart passes may grow while they change nothing (no new face, none missed,
        /// none lost since the last) and the camera looks still: judged from the scene behind
        /// the faces (patches of it followed from frame to frame, none having moved four pixels
        /// in four frames), or, where the scene is too plain or too full of faces to judge,
        /// from the faces (half of them within four pixels of where a pass last put them).
        /// Inline, after such a whole-frame pass the interval doubles, up to this many frames,
        /// and the tiles' turns stretch with it while the faces are still too; on the
        /// background schedule, passes that went back to back start further apart in the same
        /// way. Any change, or a moving camera, brings passes back to their pace at once.
        /// Passes are where the time goes, and a still camera needs few however its faces move
        /// (they are tracked); the price is that a face appearing meanwhile waits for the next
        /// pass. 1 (or the inline interval): never stretched.
        public var quietInterval: Int = 12
        /// On the background schedule, whether the first pass (and the first after ``reset()``)
        /// starts with the detector's quick look (``FaceDetecting/quickPass(in:candidatesDownTo:)``),
        /// where its passes shrink the frame: the larger faces of a live source are reported
        /// from its second frame rather than once a full pass is over (~70–100 ms at 720p here,
        /// the fourth frame at 30 fps). The pass follows on the same frame, about as much later
        /// as the look took (~20 ms): on the tune and report splits, paced, faces of 100 px and
        /// more gained 0.02–0.04 of recall and scenes of only small faces lost up to 0.03
        /// (docs/performance.md).
        public var quickFirstLook: Bool = true
        /// On the background schedule, after ``FaceTracker/prepare(width:height:)``: when a
        /// whole-frame pass took at most this long there, the first pass (and the first after
        /// ``FaceTracker/reset()``) runs on the first frame itself, before its faces are
        /// returned — and so does the first pass after a cut (three or more tracked faces, half
        /// or more, lost in one frame) that starts the tiles' sweep again, when no pass is
        /// under way: the only times the frame path waits for the network. Their faces are
        /// then reported from that frame, and the tiles' sweep starts a pass sooner; the quick
        /// first look (``quickFirstLook``) is then not needed and not taken.
        /// A slower pass (or no `prepare`) keeps the first pass off the frame path. The default,
        /// 50 ms, is a frame and a half at 30 fps: the second frame waits for the first, none is
        /// dropped. CenterFace at 720p takes ~20 ms on one thread here, ~40 ms with two busy
        /// loops beside it. On the tune split, paced, six kinds gained 0.005–0.024 of recall,
        /// idle and with two busy loops (docs/performance.md). nil: never.
        public var firstPassOnFrameWithin: Duration? = .milliseconds(50)
        /// On the background schedule with tiles (``tiles``), whether the tiles' sweep (after
        /// the first whole-frame pass, after ``reset()``, and after a cut: half or more of three
        /// or more faces lost in one frame, at most once a second) runs as one job: every tile
        /// in turn on the same frame, back to back on the worker, each tile's faces reported as
        /// soon as its pass ends. Without it the tiles take turns with whole-frame passes, one
        /// tile every other pass (at 720p, six tiles: twelve passes, a second or more). The job
        /// (~100 ms at 720p on one thread here) holds its lane meanwhile, so it is taken only
        /// where the whole-frame pass before it found a small face or none: a scene of large
        /// faces only sweeps its tiles in turn. Inline, the first frame looks at every tile in
        /// turn. On the report split, paced, it found a crowd's small faces 3–4 frames sooner
        /// than one pass over the whole frame at the tiles' scale did (docs/performance.md).
        public var sweepAtOnce: Bool = true
        /// Whether a cut seen in the image itself (`SceneCut`: the frame's coarse luma against
        /// the last frame's) starts the tracker over on that frame, as a frame of another size
        /// does: no face of the old scene is carried into the new one, passes under way are let
        /// go, and the cut frame gets the first frame's looks (inline, the whole frame and every
        /// tile; paced, its first pass on the frame where it is quick enough). A slideshow's
        /// next photo, an edit. (Off, the grid is not measured.) (docs/performance.md, "Cuts".)
        public var cutsFromImage: Bool = true
        /// Whether a tile's pass looks closer at its weak small boxes: each box below the
        /// detector's threshold (down to ``confirmationThreshold``) too small at the tile's
        /// scale for the network to be trusted is looked at again with its surroundings
        /// enlarged (a detector that can: CenterFace, twice the tile's scale); a face found
        /// there, not touching the frame's edge, is a face of the tile's pass. Faces of 15–20 px
        /// in real group photos: as read, tune split, `crowd` recall 0.981 → 0.997,
        /// `crowd-sweep` 0.971 → 0.984, at ~1 ms a look (docs/performance.md). On the background
        /// schedule a whole-frame pass's weak boxes too small for its scale get closer looks too,
        /// taken where the face found is confident (0.5): a new scene's small faces come with
        /// its first whole-frame pass instead of the tiles' sweep (paced, tune split: `cuts`
        /// 0.967 → 0.995, `crowd-sweep` 0.955 → 0.969).
        public var closerLooks: Bool = true
        /// For how many frames a face the correlation lost is still looked for, carried on by
        /// its last motion (a face passing behind someone or something), and taken up again,
        /// with no pass, where it matches its patch by at least ``revivalCorrelation``. Not
        /// reported meanwhile; not looked for after a cut (half or more of three or more
        /// faces lost in one frame), nor where the detector's last box for it was weak (0.6).
        /// 0: a lost face is dropped, and a pass finds it anew.
        public var coastFrames: Int = 30
        /// The correlation (−1…1) at which a lost face is taken up again (see ``coastFrames``):
        /// above ``minCorrelation``, as a face is found again where it was not expected.
        public var revivalCorrelation: Double = 0.8
        /// Under a camera panning sideways (the scene behind the faces moving together, as
        /// ``quietInterval`` judges it), how many passes in a row look only at the edge the
        /// camera brings into view before a whole-frame pass: a strip at the tiles' scale,
        /// where new faces come in, small ones included (a whole-frame pass misses those, and
        /// a tile's turn comes round slowly), at about two thirds of a whole-frame pass's cost
        /// at 720p here. The faces already in view are tracked meanwhile; inline, a large face
        /// lost still calls for a whole-frame pass. Only with tiles (``tiles``) and the scene
        /// followed (``quietInterval`` above the schedule's own pace). 0: every pass is a
        /// whole-frame pass, as before a pan was told apart.
        public var edgeLooks: Int = 2

        public init(schedule: Schedule = .inline(interval: 4)) { self.schedule = schedule }

        /// What a pass asks the detector for: boxes down to the confirmation threshold (1: none
        /// below the detector's own threshold, which is at most 1).
        var candidateFloor: Double { confirmationThreshold ?? 1 }

        /// Whether passes can ever go further apart than the schedule's own pace (inline, its
        /// interval; background, back to back): if not, whether the camera moves changes
        /// nothing, and the scene behind the faces is not followed.
        var quietStretches: Bool {
            switch schedule {
            case .inline(let interval): quietInterval > interval
            case .background: quietInterval > 1
            }
        }

        func validate() throws(FaceDetectorError) {
            if case .inline(let interval) = schedule, interval < 1 {
                throw .invalidOptions("the pass interval must be at least 1, got \(interval)")
            }
            guard patchSize >= 8, patchSize <= 128 else { throw .invalidOptions("patchSize must be in 8…128") }
            guard searchMargin > 0, searchMargin <= 4 else { throw .invalidOptions("searchMargin must be in (0, 4]") }
            guard minCorrelation > -1, minCorrelation < 1 else { throw .invalidOptions("minCorrelation must be in (-1, 1)") }
            guard maxMissedPasses >= 0 else { throw .invalidOptions("maxMissedPasses must be >= 0") }
            guard matchOverlap > 0, matchOverlap <= 1 else { throw .invalidOptions("matchOverlap must be in (0, 1]") }
            guard quietInterval >= 1 else { throw .invalidOptions("quietInterval must be at least 1, got \(quietInterval)") }
            guard establishedAfter >= 1 else { throw .invalidOptions("establishedAfter must be at least 1") }
            guard coastFrames >= 0 else { throw .invalidOptions("coastFrames must be at least 0, got \(coastFrames)") }
            guard revivalCorrelation > -1, revivalCorrelation < 1 else { throw .invalidOptions("revivalCorrelation must be in (-1, 1)") }
            guard edgeLooks >= 0 else { throw .invalidOptions("edgeLooks must be at least 0, got \(edgeLooks)") }
            if let c = confirmationThreshold, !(c >= 0 && c <= 1) {
                throw .invalidOptions("confirmationThreshold must be in 0…1, got \(c)")
            }
        }
    }

    public let options: Options
    public let detector: any FaceDetecting
    private let state = Mutex(TrackerState())
    private let worker: PassWorker?
    /// Whether the first pass runs on the first frame (``Options/firstPassOnFrameWithin``):
    /// set by ``prepare(width:height:)``, kept across ``reset()``.
    private let firstPassOnFrame = Atomic<Bool>(false)

    /// - Parameters:
    ///   - detector: what runs the passes.
    ///   - options: the schedule and the tracking thresholds.
    ///   - scheduler: where background passes run; trackers given the same one take turns on
    ///     it (several cameras: ``PassScheduler``). nil: a queue of its own.
    public init(detector: any FaceDetecting, options: Options = Options(), scheduler: PassScheduler? = nil) throws(FaceDetectorError) {
        try options.validate()
        self.detector = detector
        self.options = options
        self.worker =
            options.schedule == .background
            ? PassWorker(detector: detector, floor: options.candidateFloor, scheduler: scheduler ?? PassScheduler()) : nil
    }

    /// The faces in the next frame of the video, in its pixel coordinates.
    public func faces(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        try state.withLock { (s) throws(FaceDetectorError) -> [Face] in
            let gray: PixelBuffer
            do throws(PixelBufferError) { gray = try s.grayView(of: image) } catch { throw .pixelBuffer(error) }
            // A frame of another size (a folder of photos of different sizes) or another scene
            // (``Options/cutsFromImage``) is a new scene: nothing of the old is carried into it.
            let otherScene = options.cutsFromImage && s.sceneCut.isCut(gray)
            if otherScene || s.frameSize.map({ $0 != (image.width, image.height) }) == true {
                let sceneCut = s.sceneCut
                s.startOver()
                s.sceneCut = sceneCut
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
            var lost: [Box] = []
            var foundBefore = 0
            var revived: [Int] = []
            var lostInView: [Box] = [] // lost, and not against the edge they were moving towards
            for i in s.tracks.indices {
                let wasFound = s.tracks[i].isFound
                if wasFound { foundBefore += 1 }
                let found = s.tracks[i].step(
                    in: gray, margin: options.searchMargin, minCorrelation: options.minCorrelation, coast: options.coastFrames,
                    revival: options.revivalCorrelation)
                if !found, wasFound {
                    lost.append(s.tracks[i].box)
                    if !s.tracks[i].isLeaving(width: gray.width, height: gray.height) { lostInView.append(s.tracks[i].box) }
                }
                if found, !wasFound { revived.append(i) }
            }
            // A cut: half or more of three or more faces lost in one frame.
            let cut = lost.count >= 3 && 2 * lost.count >= foundBefore
            s.endCoasting(revived: revived, cut: cut, coast: options.coastFrames)

            if options.quietStretches { s.camera.step(in: gray, minCorrelation: options.minCorrelation) }

            // 2. Passes: over the whole frame, and (where the detector shrinks the frame) over
            //    its tiles in turn, for faces too small to be seen in the whole.
            if options.tiles, s.plan?.width != image.width || s.plan?.height != image.height {
                s.plan = TilePlan(
                    width: image.width, height: image.height, scale: detector.passScale(width: image.width, height: image.height))
                s.restartSweep()
            }
            switch options.schedule {
            case .inline(let interval):
                // Whole-frame passes every `interval` frames — stretched while passes change
                // nothing (``Options/quietInterval``) — and where a face large enough for them
                // to see was lost; the first frame's looks at every tile too; a face too small
                // for them calls for the tile that holds it; then one tile every twice the
                // interval, on a frame between whole-frame passes, in turn.
                // Judged before this frame's passes (where the faces judge it, a track a pass has
                // just renewed starts again where the pass put it, and would look still however
                // the camera moves); a camera that starts moving brings the pass due at once.
                let still = s.cameraStill
                let current = still ? max(interval, s.passInterval) : interval
                var looks: [PassLook] = []
                let first = s.lastPass == 0
                let smallFace = s.plan?.smallFace ?? 0
                let lostLarge = lost.contains { max($0.width, $0.height) >= smallFace }
                // A small face lost against the edge it was moving towards has left: no tile is
                // looked at for it (under a sweeping camera, a tile's pass for every face
                // leaving: tune split, `crowd-sweep`, 0.57 → 0.47 passes a frame without them).
                // A large one still calls for a whole-frame pass, which finds faces coming in
                // meanwhile (tune `enter-leave-occluded`: 0.994 → 0.985 where it did not).
                let lostTiles = s.plan?.tilesHolding(lostInView.filter { max($0.width, $0.height) < smallFace }) ?? []
                if lostLarge || first || s.frame - s.lastPass >= current {
                    // Under a pan, a pass on schedule may look only at the edge the camera
                    // brings into view (``TrackerState/enteringEdge(gap:)``), at the tiles'
                    // scale: new faces come in there, and the faces already in view are tracked.
                    if !first, !lostLarge, let edge = s.edgeInsteadOfWholeFrame(gap: 2 * interval, most: options.edgeLooks) {
                        looks = [edge]
                    } else {
                        looks = [.region(nil)]
                        if first { looks += (s.plan?.tiles ?? []).map { .region($0) } }
                    }
                    s.lastPass = s.frame
                    if first { s.lastTilePass = s.frame }
                }
                if !first { looks += lostTiles.map { .region($0) } }
                // The rotation keeps its turn beside tiles called for lost faces (faces lost again
                // and again — a panning crowd — held back the tiles where new small faces are).
                // Tiles stretch only while the camera looks still: under a moving camera new small
                // faces come into view, and only tiles see them (report split, `crowd-pan`: recall
                // 0.996 → 0.952 in a run where tiles stretched whatever the camera did). And only
                // while the faces are still too: people moving about under a still camera come and
                // go (tune split, `enter-leave-occluded`: recall 0.987 against 0.973 with tiles
                // stretched under any still camera).
                let wholeFramePass = looks.contains(.region(nil))
                let onSchedule = wholeFramePass || looks.contains(where: \.isEdge)
                let tileInterval = 2 * (still && s.tracksStill ? current : interval)
                if !onSchedule, let tiles = s.plan?.tiles, !tiles.isEmpty, s.frame - s.lastTilePass >= tileInterval {
                    let tile = tiles[s.nextTile % tiles.count]
                    if !looks.contains(.region(tile)) { looks.append(.region(tile)) }
                    s.nextTile = (s.nextTile + 1) % tiles.count
                    s.lastTilePass = s.frame
                }
                var changed = !lost.isEmpty
                for look in looks {
                    if try pass(look, on: image, gray: gray, state: &s) { changed = true }
                }
                s.pace(
                    base: interval, changed: changed || first, still: still, wholeFramePass: wholeFramePass, quiet: options.quietInterval)
                if options.quietStretches { s.placeAnchors(in: gray, wholeFramePass: wholeFramePass, options: options) }
            case .background:
                guard let worker else { break }
                // A cut (half or more of three or more faces lost in one frame): the new scene's
                // small faces are looked for as at the start, the tiles' sweep again — unless
                // one is already due or the last began within a second (a shaking camera, a
                // flash: not a sweep after every pass).
                var sweepRestarted = false
                if options.sweepAtOnce, cut, s.turns > 2, s.frame - s.sweepFrom >= TrackerState.sweepSpacing {
                    s.restartSweep()
                    sweepRestarted = true
                }
                s.remember(gray)
                let still = s.cameraStill // before a result renews the tracks, as inline
                var changed = !lost.isEmpty
                var wholeFramePass = false
                // Results and whether a pass is still under way, read together: a pass ending
                // between the two looked idle with its result not yet merged, and the next pass's
                // start let go of the frames that result is carried forward through.
                let (results, busy) = worker.poll()
                for result in results {
                    s.statistics.recordPass(latency: result.latency, age: s.frame - result.frame)
                    // A pass on a frame from before a change of size: its boxes are of the old size.
                    guard result.frame > s.startedOver else { continue }
                    if s.merge(result.pass, look: result.look, passFrame: result.frame, gray: gray, history: s.history, options: options) {
                        changed = true
                    }
                    // A quick look sees only the larger faces: it neither quiets the pace nor
                    // places the scene's anchors as a whole-frame pass does. The sweep's last
                    // tile: every tile has been looked at, the tiles' first sweep is over.
                    switch result.look {
                    case .region(let region): wholeFramePass = wholeFramePass || region == nil
                    case .quick, .edge: break
                    }
                    if result.endsSweep { s.sweepDone(passFrame: result.frame) }
                }
                // The first pass on the first frame itself, where it is quick enough
                // (``Options/firstPassOnFrameWithin``), and the first of a cut's sweep on the
                // cut frame itself (the new scene's large faces from that frame: paced `cuts`,
                // report and tune, idle and with two busy loops, +0.007 to +0.019); the next
                // pass, the sweep's first turn, goes to the worker from the next frame on.
                if s.lastPass == 0 || sweepRestarted, !busy, firstPassOnFrame.load(ordering: .relaxed) {
                    let look = PassLook.region(s.nextRegion().region)
                    if try pass(look, on: image, gray: gray, state: &s) { changed = true }
                    wholeFramePass = wholeFramePass || look == .region(nil)
                    s.lastPass = s.frame
                }
                // Back to back (an interval of 1) unless quiet under a still camera.
                s.pace(base: 1, changed: changed, still: still, wholeFramePass: wholeFramePass, quiet: options.quietInterval)
                if options.quietStretches { s.placeAnchors(in: gray, wholeFramePass: wholeFramePass, options: options) }
                if let failure = worker.takeFailure() { throw failure }
                let now = ContinuousClock.now
                let wanted = s.passWantedSince ?? now
                if busy {
                    s.statistics.framesWithoutPass &+= 1
                } else if s.lastPass > 0 && s.frame - s.lastPass < s.passInterval {
                    // A quiet scene: no pass is wanted yet (the schedule asked for none; not a
                    // frame without its pass).
                } else if let admission = worker.scheduler.admit(waitingSince: wanted, now: now) {
                    s.passWantedSince = nil
                    s.statistics.recordBudgetWait(now - wanted)
                    // The first pass starts with a quick look where the detector has one
                    // (``Options/quickFirstLook``); the tiles' first turn is every tile, back to
                    // back (``Options/sweepAtOnce``).
                    let quick =
                        s.lastPass == 0 && options.quickFirstLook
                        && detector.passScale(width: image.width, height: image.height) < TilePlan.shrinkingScale
                    let (region, sweepStarts) = s.nextRegion()
                    let sweep = sweepStarts && options.sweepAtOnce && s.mayHideSmallFaces
                    // Under a pan, a whole-frame pass may look only at the entering edge, as
                    // inline — not the sweep's first (after a cut, the new scene's large faces
                    // first) — if the strip holds what came in since the edge's last look.
                    var look = PassLook.region(region)
                    if region == nil, !quick {
                        look = s.edgeInsteadOfWholeFrame(gap: s.edgeGap, most: s.turns > 1 ? options.edgeLooks : 0) ?? look
                    }
                    var looks = quick ? [.quick, look] : [look]
                    if sweep, let tiles = s.plan?.tiles { looks = tiles.map { .region($0) } }
                    s.lastPass = s.frame
                    s.beginPass()
                    worker.submit(
                        s.passCopy(of: image), frame: s.frame, looks: looks, sweep: sweep, closer: s.closerLooks(options),
                        admission: admission)
                } else {
                    // Over the CPU budget: no pass, and none on a frame kept for later — the
                    // pass is made from the frame of the moment it may start.
                    s.passWantedSince = wanted
                    s.statistics.framesWithoutPass &+= 1
                }
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

    /// Runs `look` on this frame and merges its faces at once (the inline schedule's passes,
    /// and the background schedule's first pass on its first frame); returns whether it changed
    /// what is tracked.
    private func pass(_ look: PassLook, on image: PixelBuffer, gray: PixelBuffer, state s: inout TrackerState)
        throws(FaceDetectorError) -> Bool
    {
        let started = ContinuousClock.now
        guard let found = try look.run(detector, on: image, candidatesDownTo: options.candidateFloor, closer: s.closerLooks(options))
        else { return false }
        let changed = s.merge(found, look: look, passFrame: s.frame, gray: gray, history: nil, options: options)
        s.statistics.recordPass(latency: ContinuousClock.now - started, age: 0)
        return changed
    }

    /// Gets the detector ready for frames of this size: its network for the whole frame, for a
    /// tile, for the edge a pan brings into view and for the quick look, as this tracker's
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
        guard scale < TilePlan.shrinkingScale else { return }
        let blank = try blankFrame(width: width, height: height)
        let plan = TilePlan(width: blank.width, height: blank.height, scale: scale)
        if options.tiles, let tile = plan.tiles.first {
            _ = try detector.pass(in: blank, region: tile, candidatesDownTo: options.candidateFloor)
            if options.edgeLooks > 0 && options.quietStretches, let strip = TrackerState.edgeWidth(plan) {
                let edge = Rect(x: 0, y: 0, width: strip, height: blank.height)
                _ = try detector.pass(in: blank, region: edge, scale: plan.tileScale, candidatesDownTo: options.candidateFloor)
            }
        }
        if options.schedule == .background && options.quickFirstLook {
            _ = try detector.quickPass(in: blank, candidatesDownTo: options.candidateFloor)
        }
    }

    /// Waits for a pass under way on the background schedule to finish (returns at once on
    /// the inline schedule). Passes still running at process exit are waited for too.
    public func waitUntilIdle() { worker?.waitUntilIdle() }

    /// What the passes have cost so far and how late their faces arrived (background
    /// schedule; the inline schedule counts its passes, which are never late). A pass the CPU
    /// budget is holding back now counts in ``PassStatistics/budgetWaitSeconds`` up to now, so
    /// the figure grows while the budget holds rather than in one step when it lets go.
    public var statistics: PassStatistics {
        state.withLock { s in
            var statistics = s.statistics
            if let wanted = s.passWantedSince { statistics.recordBudgetWait(ContinuousClock.now - wanted) }
            return statistics
        }
    }

    /// Forgets every track (a new video, a camera switch).
    public func reset() {
        state.withLock { $0 = TrackerState() }
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

// MARK: - Tracks

/// A box in sub-pixel image coordinates.
package struct Box: Equatable {
    package var x, y, width, height: Double
    package init(x: Double, y: Double, width: Double, height: Double) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }
    package init(_ r: Rect) { self.init(x: Double(r.x), y: Double(r.y), width: Double(r.width), height: Double(r.height)) }
    var rect: Rect {
        Rect(
            x: Int(saturating: x.rounded()), y: Int(saturating: y.rounded()), width: Int(saturating: width.rounded()),
            height: Int(saturating: height.rounded()))
    }
    func moved(_ dx: Double, _ dy: Double) -> Box { Box(x: x + dx, y: y + dy, width: width, height: height) }
    func overlaps(_ other: Box) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }
}

/// One face followed through the video.
struct Track {
    var box: Box
    /// The detector's face when last confirmed, and where it was then (landmarks follow the box).
    var detected: Face
    var detectedBox: Box
    var patch: [UInt8]
    var patchWidth = 0, patchHeight = 0
    /// Patch pixels per image pixel.
    var patchScale = 1.0
    var motion = (dx: 0.0, dy: 0.0)
    var missedPasses = 0
    /// Lost, and looked for where its motion carries it (``FaceTracker/Options/coastFrames``):
    /// no pass judges it meanwhile. A lost face not looked for is judged as before: the next
    /// pass that does not see it ends it.
    var coasting = false
    /// Frames it has been looked for since it was lost (0 while found).
    var lostFrames = 0
    /// How many passes have reported this face (weaker boxes do not count).
    var reports = 1
    /// Whether a tile's pass has reported this face: a small face only whole-frame passes have
    /// seen is judged by them until established (their sight of it is unsure both ways).
    var seenByTile = false
    var isFound = true
    /// Where the track was in the frame of the pass under way (background schedule): a pass's
    /// boxes are matched with tracks where they were then, however late the pass finishes.
    var passBox: (frame: Int, box: Box)? = nil

    init(face: Face, gray: PixelBuffer, patchSize: Int) {
        // The part in the frame (a box may stand out past an edge): the box is what the patch
        // shows, which a face leaving at an edge relies on (``cut(_:scale:width:height:)``).
        box = Box(face.bounds.clamped(width: gray.width, height: gray.height))
        detected = face
        detectedBox = box
        patch = []
        takePatch(from: gray, patchSize: patchSize)
    }

    /// The face as reported: the detector's face moved to where the track is now, and scaled to
    /// the size it is followed at.
    var face: Face {
        let sx = box.width / max(1, detectedBox.width)
        let sy = box.height / max(1, detectedBox.height)
        return detected.mapped(scaleX: sx, scaleY: sy, dx: box.x - sx * detectedBox.x, dy: box.y - sy * detectedBox.y)
    }

    /// The patch the track looks for: the face's box shrunk so its longer side is `patchSize`.
    mutating func takePatch(from gray: PixelBuffer, patchSize: Int) {
        let r = box.rect.clamped(width: gray.width, height: gray.height)
        guard r.width >= 4, r.height >= 4 else {
            isFound = false
            return
        }
        patchScale = min(1, Double(patchSize) / Double(max(r.width, r.height)))
        patchWidth = max(4, Int((Double(r.width) * patchScale).rounded()))
        patchHeight = max(4, Int((Double(r.height) * patchScale).rounded()))
        guard let small = try? Self.shrink(gray, r, width: patchWidth, height: patchHeight) else {
            isFound = false
            return
        }
        patch = small.packedBytes()
    }

    /// A face found at neither its size nor these (its size times each) is lost: a face coming
    /// closer or going away grows or shrinks past its patch in a few frames, and each time it
    /// was lost a pass was called for it (report split, `sizes`: 41 of 117 passes after the
    /// first frame). Tried only where the face is not found at its size, so a face that keeps
    /// its size costs no more. (A face whose patch is its own size, under ~24 px, is not
    /// followed smaller: that would enlarge the search area, which the area resize refuses.)
    static let growths = [1.1, 1 / 1.1]

    /// The confidence of the detector's last box for a face below which the face, once lost,
    /// is not looked for again: a weak box is often part of a face (cut by something in front
    /// of it, or by the frame's edge), and its patch, a part of a face and of what hid the
    /// rest, matched beside the face where it came out (report clips, paced, four at once:
    /// boxes beside the face, scored 0.07–0.49, for up to seven frames each).
    static let sureConfidence = 0.6

    /// Finds the patch near where the face was, at its size or (`rescaling`) a tenth larger or
    /// smaller (the box and the patch's scale follow); false when the best match is too weak.
    /// A face lost fewer than `coast` frames ago is looked for where its last motion carries
    /// it, at its size, and found again at `revival` or better.
    mutating func step(
        in gray: PixelBuffer, margin: Double, minCorrelation: Double, rescaling: Bool = true, coast: Int = 0, revival: Double = 1
    ) -> Bool {
        if isFound {
            let found = find(in: gray, margin: margin, minCorrelation: minCorrelation, rescaling: rescaling)
            if !found { coasting = coast > 0 && !patch.isEmpty && (detected.confidence ?? 1) >= Self.sureConfidence }
            return found
        }
        guard coasting, lostFrames < coast else {
            coasting = false
            return false
        }
        lostFrames += 1
        let velocity = motion
        box = box.moved(velocity.dx, velocity.dy)
        // Carried half out of the frame: it has left (and is not looked for at a cost every frame).
        guard 2 * box.rect.clamped(width: gray.width, height: gray.height).area >= box.rect.area else {
            coasting = false
            return false
        }
        guard find(in: gray, margin: margin, minCorrelation: revival, rescaling: false) else { return false }
        // `find` measured the correction to where the motion carried the box.
        motion = (velocity.dx + motion.dx, velocity.dy + motion.dy)
        return true
    }

    /// Whether it is leaving the frame: its box (the part in view) against an edge it moves
    /// towards: half a pixel a frame or more, more than across (a face resting against an edge,
    /// or sliding along it, has not left).
    func isLeaving(width: Int, height: Int) -> Bool {
        let (dx, dy) = motion
        if abs(dx) >= 0.5 && abs(dx) > abs(dy) { return dx < 0 ? box.x <= 1 : box.x + box.width >= Double(width) - 1 }
        if abs(dy) >= 0.5 && abs(dy) > abs(dx) { return dy < 0 ? box.y <= 1 : box.y + box.height >= Double(height) - 1 }
        return false
    }

    /// Whether it was lost and is looked for no longer: it ends.
    var hasGone: Bool { !isFound && !coasting && lostFrames > 0 }

    private mutating func find(in gray: PixelBuffer, margin: Double, minCorrelation: Double, rescaling: Bool) -> Bool {
        let mx = box.width * margin + abs(motion.dx)
        let my = box.height * margin + abs(motion.dy)
        let area = Rect(
            x: Int((box.x - mx).rounded(.down)), y: Int((box.y - my).rounded(.down)),
            width: Int((box.width + 2 * mx).rounded(.up)), height: Int((box.height + 2 * my).rounded(.up))
        )
        .clamped(width: gray.width, height: gray.height)
        // A face leaving at an edge: only the part of its patch that can be in view where its
        // motion carries it is looked for (at its size), while that is half of it or more.
        // Before, the whole patch no longer fitted, the face was lost on every frame as the
        // edge cut it, and each loss called a pass that found the cut face again.
        let cut = Self.cut(box.moved(motion.dx, motion.dy), scale: patchScale, width: gray.width, height: gray.height)
        let (cw, ch) = (patchWidth - cut.left - cut.right, patchHeight - cut.top - cut.bottom)
        guard 2 * cw >= patchWidth, 2 * ch >= patchHeight, cw >= 4, ch >= 4 else {
            isFound = false
            return false
        }
        let cropped = cw != patchWidth || ch != patchHeight
        var found: (match: fkcv_match, growth: Double, sw: Int, sh: Int)? = nil
        var message = [CChar](repeating: 0, count: 128)
        for growth in [1] + (rescaling && !cropped ? Self.growths : []) {
            let sw = Int((Double(area.width) * patchScale / growth).rounded())
            let sh = Int((Double(area.height) * patchScale / growth).rounded())
            guard sw >= cw, sh >= ch, let search = try? Self.shrink(gray, area, width: sw, height: sh) else { continue }
            var match = fkcv_match()
            let status = search.withUnsafeBytes(ofPlane: 0) { s, sp in
                patch.withUnsafeBufferPointer { p in
                    fkcv_match_template(
                        s.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(sw), Int32(sh), sp.bytesPerRow,
                        p.baseAddress! + cut.top * patchWidth + cut.left, Int32(cw), Int32(ch), patchWidth, &match,
                        &message, message.count)
                }
            }
            // At its size if found so; else the better of the two sizes either side (the first
            // to pass the floor leaned towards growing, across the size that decides which
            // passes judge a face).
            if status == FKCV_OK, Double(match.score) >= minCorrelation, match.score > found?.match.score ?? -1 {
                found = (match, growth, sw, sh)
                if growth == 1 { break }
            }
        }
        guard let (match, growth, sw, sh) = found else {
            isFound = false
            return false
        }
        isFound = true
        coasting = false
        lostFrames = 0
        // Sub-pixel peak: a parabola through the best score and its neighbours, each way.
        func refine(_ left: Float, _ centre: Float, _ right: Float) -> Double {
            let d = Double(left - 2 * centre + right)
            return d < 0 ? max(-0.5, min(0.5, Double(left - right) / (2 * d))) : 0
        }
        // Where the whole patch's corner is (the part looked for starts `cut` into it).
        let px = Double(match.x) - Double(cut.left) + refine(match.left, match.score, match.right)
        let py = Double(match.y) - Double(cut.top) + refine(match.up, match.score, match.down)
        let nx = Double(area.x) + px / (Double(sw) / Double(area.width))
        let ny = Double(area.y) + py / (Double(sh) / Double(area.height))
        motion = (nx - box.x, ny - box.y)
        box = box.moved(motion.dx, motion.dy)
        if growth != 1 {
            box = Box(x: box.x, y: box.y, width: box.width * growth, height: box.height * growth)
            patchScale /= growth
        }
        return true
    }

    /// Patch pixels, each side, of a face at `box` that fall outside a `width` x `height` frame.
    static func cut(_ box: Box, scale: Double, width: Int, height: Int) -> (left: Int, top: Int, right: Int, bottom: Int) {
        func pixels(_ outside: Double) -> Int { outside > 0 ? Int((outside * scale).rounded(.up)) : 0 }
        return (
            pixels(-box.x), pixels(-box.y), pixels(box.x + box.width - Double(width)), pixels(box.y + box.height - Double(height))
        )
    }

    /// `rect` of the gray image shrunk (area average) to `width` x `height`.
    static func shrink(_ gray: PixelBuffer, _ rect: Rect, width: Int, height: Int) throws(PixelBufferError) -> PixelBuffer {
        let crop = try gray.cropped(to: rect)
        if width == rect.width && height == rect.height { return crop }
        var out = try PixelBuffer(width: width, height: height, format: .gray8)
        try Resize.area(crop, into: &out)
        return out
    }
}

struct TrackerState: ~Copyable {
    var frame = 0
    /// The size of the frames so far, and the frame before the first of that size (0: none).
    var frameSize: (width: Int, height: Int)? = nil
    var startedOver = 0
    var lastPass = 0
    var tracks: [Track] = []
    var grayScratch: PixelBuffer? = nil
    /// Background schedule: gray images from the frame of the pass under way to the newest,
    /// newest last, so a pass's faces can be carried to the current frame however late it
    /// finishes. Past ``historyLength`` images every other one between the first and the last
    /// is let go: memory stays bounded and a slow pass is carried forward in longer steps. 8:
    /// a 720p camera's history is then ~8 MB, not ~16 (docs/performance.md, "Memory of a fleet").
    var history: [(frame: Int, gray: PixelBuffer)] = []
    static let historyLength = 8
    /// Gray images let go from the history, reused for the next ones (no allocation a frame).
    var spareGrays: [PixelBuffer] = []
    /// The copy of a borrowed frame the last pass ran on, reused for the next pass.
    var passImage: PixelBuffer? = nil
    /// The tiles for the current frame size (nil: not yet planned, or tiles off), the passes
    /// scheduled since (background), the next tile, and the frame of the last tile pass (inline).
    var plan: TilePlan? = nil
    /// Background schedule with a CPU budget: since when a pass has been held back (nil: none is).
    var passWantedSince: ContinuousClock.Instant? = nil
    var turns = 0
    /// The frame the tiles' sweep last (re)started on: a sweep's job from before it (a cut
    /// while it ran) does not end the new one.
    var sweepFrom = 0
    /// Frames from one restarted sweep to the next, at least.
    static let sweepSpacing = 30
    var nextTile = 0
    var lastTilePass = 0
    /// Frames from one pass to the next now: inline, between whole-frame passes (0 until the
    /// first); background, between passes' starts (0 or 1: back to back).
    var passInterval = 0

    /// As new, for frames of another size: the frame count, the pass figures and a budget wait
    /// go on, and results of passes on earlier frames are let go.
    mutating func startOver() {
        let (frame, statistics, wanted) = (self.frame, self.statistics, passWantedSince)
        self = TrackerState()
        // A pass held back by the CPU budget is still owed: its wait goes on from when it began.
        (self.frame, self.statistics, startedOver, passWantedSince) = (frame, statistics, frame, wanted)
    }

    /// Faces lost earlier and found again this frame (`revived`) end where they lie on a face
    /// that is followed (the patch matched a neighbour, or the face it lies on is this one,
    /// found again by a pass; of two revived onto one face, the later in the list stays);
    /// after a cut no lost face is looked for again (the scene it was in has gone): they are
    /// judged by the next pass, as any lost face.
    mutating func endCoasting(revived: [Int], cut: Bool, coast: Int) {
        for i in revived {
            let r = tracks[i].box.rect
            let onAnother = tracks.indices.contains { j in j != i && tracks[j].isFound && TrackAssociation.lies(r, on: tracks[j].box.rect) }
            if onAnother {
                tracks[i].isFound = false
                tracks[i].lostFrames = coast // it ends (its box is on the other face now)
            }
        }
        if cut {
            for i in tracks.indices where !tracks[i].isFound { tracks[i].coasting = false }
        }
    }

    /// Sets the frames to the next pass after this frame's: `base` again on any change (a new
    /// face, one missed or lost) or under a moving camera — a pan brings new faces into view
    /// all the time, small ones only tiles see; after a quiet whole-frame pass under a still
    /// camera, twice the interval so far, up to `quiet` (both schedules: inline `base` is its
    /// interval, background 1, back to back).
    mutating func pace(base: Int, changed: Bool, still: Bool, wholeFramePass: Bool, quiet: Int) {
        if changed || !still {
            passInterval = base
        } else if wholeFramePass {
            passInterval = min(2 * max(passInterval, base), max(base, quiet))
        }
    }

    /// Where the scene behind the faces is followed, to tell whether the camera moves.
    var camera = CameraMotion()
    /// The last frame's coarse luma, to tell a cut (``FaceTracker/Options/cutsFromImage``).
    var sceneCut = SceneCut()

    /// Passes that looked only at the entering edge since the last whole-frame pass
    /// (``FaceTracker/Options/edgeLooks``), and the frame of the last (0: none).
    var edgeLooksInARow = 0
    var lastEdgeLook = 0
    /// The side of an edge strip across the pan at the network's input (px): at 720p it holds
    /// a face too small for a whole-frame pass (64 px) that came into view over the 8 frames
    /// between edge looks inline, under a pan of up to ~11 px a frame.
    static let edgeSide = 160

    /// The look to take instead of a whole-frame pass: the entering edge (``enteringEdge(gap:)``)
    /// while fewer than `most` such looks came since the last whole-frame pass; nil: the whole
    /// frame, which starts the count again.
    mutating func edgeInsteadOfWholeFrame(gap: Int, most: Int) -> PassLook? {
        guard edgeLooksInARow < most, let edge = enteringEdge(gap: gap) else {
            edgeLooksInARow = 0
            return nil
        }
        edgeLooksInARow += 1
        lastEdgeLook = frame
        return .edge(edge, scale: plan?.tileScale ?? 1)
    }

    /// Under a horizontal pan, the strip of the frame the camera brings into view (the side
    /// the scene moves away from), as wide as ``edgeSide`` at the tiles' scale: where new
    /// faces come in, small ones included. nil where there is no such pan (a still camera, a
    /// tilt, a pan too fast for the strip to hold what came in over `gap` frames, the time
    /// since the edge's last look), or no tiles (the whole-frame pass sees every face).
    func enteringEdge(gap: Int) -> Rect? {
        guard let plan, let width = Self.edgeWidth(plan), let pan = camera.pan else { return nil }
        let speed = abs(pan.dx)
        // A face too small for a whole-frame pass that came whole into view since the last look
        // lies whole in the strip (clear of its inner edge by the tiles' 2 px).
        guard speed >= 1, abs(pan.dy) <= speed / 2, speed * Double(gap) + plan.smallFace + 2 <= Double(width) else { return nil }
        return Rect(x: pan.dx < 0 ? plan.width - width : 0, y: 0, width: width, height: plan.height)
    }

    /// The width of an edge strip in frames of `plan`'s size: ``edgeSide`` at the tiles' scale,
    /// even; nil where there are no tiles or the strip would be over half the frame.
    static func edgeWidth(_ plan: TilePlan) -> Int? {
        guard plan.tileScale > 0 else { return nil }
        let width = Int((Double(edgeSide) / plan.tileScale).rounded(.up)) & ~1
        return 2 * width <= plan.width ? width : nil
    }

    /// Background schedule: frames since the edge's last look, or (none yet, or long ago)
    /// twice the frames the last pass took.
    var edgeGap: Int {
        let pace = max(2, frame - lastPass)
        let since = frame - lastEdgeLook
        return lastEdgeLook > 0 && since <= 4 * pace ? since : 2 * pace
    }

    /// Places the anchors clear of the faces: first once a whole-frame pass has said where the
    /// faces are; after a whole-frame pass once they have judged a whole window (clear of where
    /// the faces have moved since, and off an object that carried one along) unless they all
    /// moved together, a pan, which is judged over their whole window however often passes
    /// come; as soon as most are lost; and where too few could be placed, at the next
    /// whole-frame pass (not on every frame of a blank wall).
    mutating func placeAnchors(in gray: PixelBuffer, wholeFramePass: Bool, options: FaceTracker.Options) {
        let due =
            camera.placed
            ? camera.mostLost || (wholeFramePass && (!camera.canJudge || (camera.judged && !camera.moveTogether)))
            : wholeFramePass
        guard due else { return }
        camera.place(in: gray, avoiding: tracks.map(\.box), patchSize: options.patchSize)
    }

    /// Whether the camera looks still: judged from the scene behind the faces
    /// (``CameraMotion``), or where it cannot judge, from the faces (``tracksStill``). Where
    /// the scene's patches, followed a whole window, disagree (some moved, some not: something
    /// passed over them, not a pan), still faces say still too; most of them lost, or all
    /// moving together, is a moving camera whatever the faces do.
    var cameraStill: Bool {
        guard let still = camera.isStill else { return tracksStill }
        return still || (camera.judged && !camera.mostLost && !camera.moveTogether && tracksStill)
    }

    /// Whether the faces look still: at least half the faces found in this frame are within
    /// four pixels each way of where a pass last put them (a panning camera carries them all
    /// away, however slowly; a swaying crowd moves a few, and comes back; a track re-centring
    /// on a pass's new box steps about a pixel on a still frame). With no face, nothing says
    /// otherwise.
    var tracksStill: Bool {
        let moves = tracks.filter(\.isFound).map { max(abs($0.box.x - $0.detectedBox.x), abs($0.box.y - $0.detectedBox.y)) }.sorted()
        return moves.isEmpty || moves[(moves.count - 1) / 2] < CameraMotion.stillDistance
    }

    /// The region of the next background pass: the whole frame first, then every other pass a
    /// tile until each has been looked at once (small faces found soon after the start), then
    /// every third (whole-frame passes, which follow large and moving faces, stay frequent).
    /// Tiles back to back after the first pass found a still crowd's small faces sooner on a
    /// busy machine (tune split, paced, two busy loops: recall 0.78 → 0.83) but faces entering
    /// meanwhile, too large for a tile's judgement, waited for the sweep's end (0.6 → 0.3).
    /// `sweepStarts`: this is the sweep's first tile, where every tile may be looked at in one
    /// job instead (``FaceTracker/Options/sweepAtOnce``, ``sweepDone(passFrame:)``).
    mutating func nextRegion() -> (region: Rect?, sweepStarts: Bool) {
        guard let tiles = plan?.tiles, !tiles.isEmpty else { return (nil, false) }
        turns &+= 1
        let sweeping = turns <= 2 * tiles.count
        guard sweeping ? turns % 2 == 0 : turns % 3 == 0 else { return (nil, false) }
        defer { nextTile = (nextTile + 1) % tiles.count }
        return (tiles[nextTile % tiles.count], turns == 2)
    }

    /// After a sweep's job on `passFrame` (every tile looked at): tiles every third pass from
    /// now on, unless the sweep has started again since that frame.
    mutating func sweepDone(passFrame: Int) {
        guard let tiles = plan?.tiles, passFrame >= sweepFrom else { return }
        turns = max(turns, 2 * tiles.count)
    }

    /// Whether the scene may hold faces only tiles see, worth the tiles' sweep in one job: the
    /// whole-frame pass before it found a small face, or none. A scene of large faces only
    /// (people before a camera) sweeps its tiles in turn between whole-frame passes: in four
    /// cameras sharing two cores, a long job on each such scene held the lanes while faces came
    /// into view (report `enter-leave-occluded`, looped: 0.86 → 0.67–0.71, session 22's fine
    /// pass).
    var mayHideSmallFaces: Bool {
        guard let plan else { return false }
        return tracks.isEmpty || tracks.contains { plan.isSmall(max($0.box.width, $0.box.height)) }
    }

    /// What a pass on this frame takes closer looks for (nil: none): tiles planned and
    /// ``FaceTracker/Options/closerLooks`` on; a whole-frame pass's weak boxes too on the
    /// background schedule. (Read as fast as it goes, the inline schedule's first frame looks at
    /// every tile, and whole-frame closer looks cost 5–15% of the results a second.)
    func closerLooks(_ options: FaceTracker.Options) -> CloserLooks? {
        guard options.closerLooks, let plan, plan.tileScale > 0 else { return nil }
        return CloserLooks(
            tileScale: plan.tileScale, frameScale: options.schedule == .background ? TilePlan.trustedSide / plan.smallFace : nil)
    }

    /// The sweep again from the next pass: a whole-frame pass, then the tiles.
    mutating func restartSweep() {
        turns = 0
        sweepFrom = frame
    }

    var statistics = PassStatistics()

    /// The luma plane itself where the format has one, else a converted copy.
    mutating func grayView(of image: PixelBuffer) throws(PixelBufferError) -> PixelBuffer {
        switch image.format {
        case .gray8, .nv12VideoRange, .nv12FullRange, .i420: return try image.lumaPlane()
        default:
            if grayScratch?.width != image.width || grayScratch?.height != image.height {
                grayScratch = try PixelBuffer(width: image.width, height: image.height, format: .gray8)
            }
            try ColorConversion.convertToGray(image, into: &grayScratch!)
            return grayScratch!
        }
    }

    /// Keeps a copy of this frame's gray image (the frame itself goes back to its pool).
    mutating func remember(_ gray: PixelBuffer) {
        var slot: PixelBuffer
        if let i = spareGrays.lastIndex(where: { $0.width == gray.width && $0.height == gray.height }) {
            slot = spareGrays.remove(at: i)
        } else if let fresh = try? PixelBuffer(width: gray.width, height: gray.height, format: .gray8) {
            slot = fresh
        } else {
            slot = gray.copy()
        }
        gray.withUnsafeBytes(ofPlane: 0) { s, sp in
            slot.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
                for row in 0..<sp.height {
                    (d.baseAddress! + row * dp.bytesPerRow).copyMemory(from: s.baseAddress! + row * sp.bytesPerRow, byteCount: sp.width)
                }
            }
        }
        history.append((frame, slot))
        if history.count > Self.historyLength {
            // Thin out: keep the first (the pass's frame), the last, and every other between.
            var thinned = [history[0]]
            for i in 1..<(history.count - 1) {
                if i % 2 == 0 { thinned.append(history[i]) } else { recycle(history[i].gray) }
            }
            thinned.append(history[history.count - 1])
            history = thinned
        }
    }

    /// A pass starts on the newest frame: the history now starts there, and every track notes
    /// where it is, for matching the pass's boxes whenever they come.
    mutating func beginPass() {
        while let first = history.first, first.frame < frame { recycle(history.removeFirst().gray) }
        // A face looked for where its motion carries it is not there as far as the pass knows:
        // the pass neither judges it nor renews it (found again before the pass ends, it would
        // be judged missed by a pass that ran while it was hidden).
        for i in tracks.indices { tracks[i].passBox = tracks[i].coasting ? nil : (frame, tracks[i].box) }
    }

    /// Keeps a let-go image for the next frames: as many as one thinning or one pass's start
    /// frees and the frames after it reuse (half the history); the rest are freed.
    private mutating func recycle(_ gray: PixelBuffer) {
        if spareGrays.count < Self.historyLength / 2 { spareGrays.append(gray) }
    }

    /// The frame for a pass on another thread: itself if it owns its memory, else a copy into
    /// the buffer the last pass used (a borrowed frame goes back to the camera's pool).
    mutating func passCopy(of image: PixelBuffer) -> PixelBuffer {
        guard image.isBorrowed else { return image }
        guard var copy = passImage, copy.width == image.width, copy.height == image.height, copy.format == image.format else {
            passImage = image.copy()
            return passImage!
        }
        // One reference while writing. The last pass has let the buffer go, unless its closure is
        // still returning: then writing copies it first (copy-on-write), never shares it.
        passImage = nil
        for plane in 0..<image.planeCount {
            image.withUnsafeBytes(ofPlane: plane) { s, sp in
                copy.withUnsafeMutableBytes(ofPlane: plane) { d, dp in
                    let rowBytes = sp.width * sp.bytesPerPixel
                    for row in 0..<sp.height {
                        (d.baseAddress! + row * dp.bytesPerRow).copyMemory(from: s.baseAddress! + row * sp.bytesPerRow, byteCount: rowBytes)
                    }
                }
            }
        }
        passImage = copy
        return copy
    }

    /// Joins a pass's faces, found in frame `passFrame`, with the tracks in frame ``frame``
    /// (``TrackAssociation``; pixels enter only as the pass's faces carried to this frame).
    /// Returns whether the pass changed what is tracked (``TrackAssociation/merge(_:changed:)``).
    @discardableResult
    mutating func merge(
        _ whole: DetectionPass, look: PassLook, passFrame: Int, gray: PixelBuffer,
        history: [(frame: Int, gray: PixelBuffer)]?, options: FaceTracker.Options
    ) -> Bool {
        let frame = frame
        let association = TrackAssociation(
            whole: whole, look: look, plan: plan, passFrame: passFrame, frame: frame, options: options,
            reacquire: { face in Self.reacquire(face, passFrame: passFrame, frame: frame, gray: gray, history: history, options: options) })
        var changed = false
        tracks = association.merge(tracks, changed: &changed)
        return changed
    }

    /// A pass's face as a track in this frame: taken from the pass's own frame and carried
    /// forward by correlation through the frames since (nil if it was lost on the way).
    /// Matched tracks are rebuilt this way too, rather than moved by their own motion since
    /// the pass's frame: a track that drifted would otherwise drag the network's box with it.
    static func reacquire(
        _ face: Face, passFrame: Int, frame: Int, gray: PixelBuffer, history: [(frame: Int, gray: PixelBuffer)]?,
        options: FaceTracker.Options
    ) -> Track? {
        let patchSize = options.patchSize
        // Where the track was in the pass's frame is the face's box: a second result from that
        // frame (the pass after a quick look) is matched with it there.
        if passFrame == frame {
            var track = Track(face: face, gray: gray, patchSize: patchSize)
            track.passBox = (passFrame, Box(face.bounds))
            return track
        }
        guard let history, let start = history.firstIndex(where: { $0.frame == passFrame }) else { return nil }
        var track = Track(face: face, gray: history[start].gray, patchSize: patchSize)
        track.passBox = (passFrame, Box(face.bounds))
        var previous = passFrame
        var span = 1
        for later in history[(start + 1)...] where track.isFound {
            // A thinned history steps over several frames at once: search as much wider.
            span = later.frame - previous
            let margin = min(options.searchMargin * Double(span), 2)
            _ = track.step(in: later.gray, margin: margin, minCorrelation: options.minCorrelation)
            previous = later.frame
        }
        guard track.isFound else { return nil }
        // The motion a frame (where it goes if lost: ``FaceTracker/Options/coastFrames``).
        if span > 1 { track.motion = (track.motion.dx / Double(span), track.motion.dy / Double(span)) }
        track.detected = track.face // the pass's face where (and at the size) it was carried to
        track.detectedBox = track.box
        return track
    }
}

// MARK: - The background schedule's thread

/// A pass's closer looks: each weak box of a tile's pass (below the detector's threshold, down
/// to the confirmation threshold) too small for the tile's scale to be trusted (under
/// ``TilePlan/trustedSide`` at the network) is looked at again, its surroundings enlarged twice
/// as much as the tile's (a 64 px square at the tile's scale, a 128x128 network at 720p, ~1 ms);
/// a face that look finds on the box joins the tile's faces, unless it touches the frame's edge
/// (a box on clutter cut by the frame's bottom edge scored 0.59 so enlarged, on an H.264 copy
/// of report `moving-1080p`: precision 1.000 → 0.926; the rule cost no face on the report
/// split, tune `crowd-sweep` 0.987 → 0.984). Faces of 15–17 px in a real group photo scored
/// 0.13–0.40 at 1:1 and 0.49–0.80 at 1.5x. Weak boxes on faces already tracked
/// are looked at too: skipping them lost report `crowd-sweep` 0.977 → 0.928 (a small face the
/// tile saw only weakly was judged missed by it and dropped).
///
/// On the background schedule a whole-frame pass's weak boxes too small for its scale get closer
/// looks too (``frameScale``): the same 128x128 network, the box's face at twice the trusted
/// side (at most twice the tiles' scale), and only a confident face is taken
/// (``wholeFrameFloor``). A new scene's small faces then come with its first whole-frame pass,
/// not after the tiles' sweep: the whole-frame pass scored 37 of 41 faces under 32 px where the
/// scenes of report `cuts-101`…`103` start 0.03–0.42, and the tiles' first faces reached the
/// frame path two frames later.
struct CloserLooks {
    /// The tiles' scale (``TilePlan/tileScale``).
    var tileScale: Double
    /// The whole-frame pass's scale, where its weak boxes are looked at closer too (nil: only
    /// tiles' are).
    var frameScale: Double? = nil
    /// At most this many closer looks a pass, the strongest boxes first.
    static let most = 8
    /// The least confidence of a face a whole-frame pass's closer look finds, as of a box the
    /// second-box rule takes for a face of its own (``TrackAssociation/isSecondBox(_:)``). Chosen
    /// on the tune split: at the confirmation threshold, as for tiles, precision as read was
    /// `enter-leave-occluded` 0.975 against 1.000 and `crowd` 0.985 against 0.990 (boxes on a
    /// head and what is behind it, ~0.33), and paced recall no better.
    static let wholeFrameFloor = 0.5

    /// The pass over `region` (a tile, or the whole frame: nil) with the faces its closer looks
    /// found.
    func pass(_ detector: any FaceDetecting, on image: PixelBuffer, region: Rect?, candidatesDownTo floor: Double)
        throws(FaceDetectorError) -> DetectionPass
    {
        var pass = try detector.pass(in: image, region: region, candidatesDownTo: floor)
        guard let passScale = region == nil ? frameScale : tileScale else { return pass }
        let least = region == nil ? Self.wholeFrameFloor : 0
        let weak = pass.candidates.filter { Double(max($0.bounds.width, $0.bounds.height)) * passScale < TilePlan.trustedSide }
        for box in weak.sorted(by: { ($0.confidence ?? 0) > ($1.confidence ?? 0) }).prefix(Self.most) {
            // The box's face at twice the trusted side at the network, at most twice the tiles'
            // scale, in a square about twice its side: a 128x128 network whatever the box.
            let boxSide = Double(max(box.bounds.width, box.bounds.height))
            let scale = min(2 * tileScale, 2 * TilePlan.trustedSide / boxSide)
            let side = Int((4 * TilePlan.trustedSide / scale).rounded()) // image px
            guard side <= image.width, side <= image.height else { continue }
            let cx = box.bounds.x + box.bounds.width / 2
            let cy = box.bounds.y + box.bounds.height / 2
            let around = Rect(
                x: max(0, min(image.width - side, cx - side / 2)), y: max(0, min(image.height - side, cy - side / 2)), width: side,
                height: side)
            let closer = try detector.pass(in: image, region: around, scale: scale, candidatesDownTo: floor)
            guard let face = closer.faces.max(by: { $0.bounds.iou(box.bounds) < $1.bounds.iou(box.bounds) }),
                face.bounds.iou(box.bounds) >= 0.3, (face.confidence ?? 1) >= least,
                !pass.faces.contains(where: { $0.bounds.iou(face.bounds) > 0.3 }),
                face.bounds.x > 0, face.bounds.y > 0, face.bounds.maxX < image.width, face.bounds.maxY < image.height
            else { continue }
            pass.faces.append(face)
            pass.candidates.removeAll { $0 == box }
        }
        return pass
    }
}

/// What a pass looked at.
enum PassLook: Equatable {
    /// A tile, or the whole frame (nil), at the detector's own scale.
    case region(Rect?)
    /// The detector's quick look: the whole frame, shrunk further.
    case quick
    /// A strip along the edge a panning camera brings into view, shrunk by `scale` (the
    /// tiles'): judged as a tile is (``TrackerState/enteringEdge(gap:)``).
    case edge(Rect, scale: Double)

    var isEdge: Bool { if case .edge = self { true } else { false } }

    /// Runs this look's pass with `detector` (nil: a quick look the detector does not offer).
    /// `closer`: a tile's pass takes closer looks at its weak small boxes.
    func run(_ detector: any FaceDetecting, on image: PixelBuffer, candidatesDownTo floor: Double, closer: CloserLooks? = nil)
        throws(FaceDetectorError)
        -> DetectionPass?
    {
        switch (self, closer) {
        case (.region(let region), let closer?): try closer.pass(detector, on: image, region: region, candidatesDownTo: floor)
        case (.region(let region), _): try detector.pass(in: image, region: region, candidatesDownTo: floor)
        case (.edge(let strip, let scale), _): try detector.pass(in: image, region: strip, scale: scale, candidatesDownTo: floor)
        case (.quick, _): try detector.quickPass(in: image, candidatesDownTo: floor)
        }
    }
}

/// A finished pass: the frame it ran on, what it looked at, its boxes, and how long it took.
struct PassResult {
    var frame: Int
    var look: PassLook
    var pass: DetectionPass
    var latency: Duration
    /// The last tile of a sweep's job (``FaceTracker/Options/sweepAtOnce``): every tile has
    /// been looked at.
    var endsSweep = false
}

/// Runs one pass at a time on its own queue and keeps its results until taken.
final class PassWorker: Sendable {
    private struct State {
        var busy = false
        var results: [PassResult] = []
        var failure: FaceDetectorError? = nil
        var generation = 0
    }
    private let detector: any FaceDetecting
    private let floor: Double
    let scheduler: PassScheduler // maybe shared with other trackers' workers
    private let state = Mutex(State())
    private let passes = DispatchGroup()

    /// Every pass under way in the process. exit() runs C++ static destructors (OpenCV's
    /// and XNNPACK's among them) while other threads go on: a pass still inside OpenCV then crashed (seen
    /// here as SIGSEGV at the end of `framekit detect` on a camera). An atexit handler, which
    /// runs before destructors registered earlier, waits for them.
    private static let inFlight = DispatchGroup()
    private static let exitGuard: Void = { atexit { PassWorker.inFlight.wait() } }()

    init(detector: any FaceDetecting, floor: Double, scheduler: PassScheduler) {
        self.detector = detector
        self.floor = floor
        self.scheduler = scheduler
        _ = Self.exitGuard
    }

    func waitUntilIdle() { passes.wait() }

    /// Runs `looks` over `image` in turn, back to back on one lane, when the scheduler lets
    /// them: each look's result is given as soon as it is ready. A quick look then the pass
    /// (``FaceTracker/Options/quickFirstLook``: on a frame of ~70 ms passes, the faces it sees
    /// ~50 ms sooner, the pass's own ~20 ms later), or every tile (`sweep`: the tiles' sweep in
    /// one job, ``FaceTracker/Options/sweepAtOnce``; its last result ends the sweep, and its
    /// CPU is not what the next pass is expected to cost).
    func submit(
        _ image: PixelBuffer, frame: Int, looks: [PassLook], sweep: Bool = false, closer: CloserLooks? = nil,
        admission: PassScheduler.Admission
    ) {
        precondition(!looks.isEmpty, "a job with no look")
        let generation = state.withLock { s -> Int in
            s.busy = true
            return s.generation
        }
        passes.enter()
        Self.inFlight.enter()
        let passes = self.passes
        scheduler.run(admission, typical: !sweep) { [self] in
            // One look after another; the last, or one that ends the job (a reset meanwhile, a
            // failure), frees the worker in the same lock as its result: a frame never finds
            // it free with a result not yet given.
            for (i, look) in looks.enumerated() {
                let last = i == looks.count - 1
                let started = ContinuousClock.now
                let outcome = Result { () throws(FaceDetectorError) -> DetectionPass? in
                    try look.run(detector, on: image, candidatesDownTo: floor, closer: closer)
                }
                let latency = ContinuousClock.now - started
                let goOn = self.state.withLock { s in
                    var goOn = false
                    if s.generation == generation {
                        switch outcome {
                        case .success(let pass):
                            if let pass {
                                s.results.append(
                                    PassResult(frame: frame, look: look, pass: pass, latency: latency, endsSweep: sweep && last))
                            }
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
            PassWorker.inFlight.leave()
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
