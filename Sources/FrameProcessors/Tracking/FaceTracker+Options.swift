extension FaceTracker {
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
        /// On the background schedule, after ``FaceTracker/prepare(width:height:)``: when a
        /// whole-frame pass took at most this long there, the first pass (and the first after
        /// ``FaceTracker/reset()``) runs on the first frame itself, before its faces are
        /// returned — and so does the first pass after a cut seen in the image
        /// (``cutsFromImage``), which starts the tracker over, when no pass is under way: the
        /// only times the frame path waits for the network. Their faces are
        /// then reported from that frame, and the tiles' sweep starts a pass sooner.
        /// A slower pass (or no `prepare`) keeps the first pass off the frame path. The default,
        /// 50 ms, is a frame and a half at 30 fps: the second frame waits for the first, none is
        /// dropped. CenterFace at 720p takes ~20 ms on one thread here, ~40 ms with two busy
        /// loops beside it. Paced and idle, mean recall went 0.842 → 0.866 on the report split
        /// (every kind higher) and 0.842 → 0.865 on tune (docs/performance.md). nil: never.
        public var firstPassOnFrameWithin: Duration? = .milliseconds(50)
        /// On the background schedule with tiles (``tiles``), whether the tiles' sweep (after
        /// the first whole-frame pass, after ``reset()``, and after a cut seen in the image,
        /// ``cutsFromImage``) runs as one job: every tile
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
        /// reported meanwhile; not looked for after a cut (the tracker starts over), nor where
        /// the detector's last box for it was weak (0.6).
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
}
