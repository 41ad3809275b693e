import FrameCore

/// What a ``FaceTracker`` knows between frames: the tracks, the scene behind them, what it
/// looks at next (``LookPlanner``), the frames a background pass's faces are carried through
/// (``FrameHistory``) and what the passes cost. Held by the frame path only: a pass on another
/// thread never touches it (its result is merged on a later frame).
struct TrackerState: ~Copyable {
    let policy: TrackerPolicy
    var frame = 0
    /// The size of the frames so far, and the frame before the first of that size or scene
    /// (0: none): results of passes on frames up to it are let go.
    var frameSize: (width: Int, height: Int)? = nil
    var startedOver = 0
    var tracks: [Track] = []
    var grayScratch: PixelBuffer? = nil
    var history: FrameHistory
    var planner: LookPlanner
    /// Background schedule with a CPU budget: since when a pass has been held back (nil: none is).
    var passWantedSince: ContinuousClock.Instant? = nil
    /// Where the scene behind the faces is followed, to tell whether the camera moves.
    var camera: CameraMotion
    /// The last frame's coarse luma, to tell a cut (``FaceTracker/Options/cutsFromImage``).
    var sceneCut: SceneCut
    var statistics = PassStatistics()

    init(policy: TrackerPolicy) {
        self.policy = policy
        history = FrameHistory(length: policy.historyLength)
        planner = LookPlanner(policy: policy)
        camera = CameraMotion(policy: policy)
        sceneCut = SceneCut(policy: policy)
    }

    /// As new, for another scene (frames of another size, a cut): the frame count, the pass
    /// figures, the scene-cut grid and a budget wait go on, and results of passes on earlier
    /// frames are let go.
    mutating func startOver() {
        let (frame, statistics, wanted, sceneCut) = (self.frame, self.statistics, passWantedSince, self.sceneCut)
        self = TrackerState(policy: policy)
        // A pass held back by the CPU budget is still owed: its wait goes on from when it began.
        (self.frame, self.statistics, startedOver, passWantedSince, self.sceneCut) = (frame, statistics, frame, wanted, sceneCut)
    }

    /// Faces lost earlier and found again this frame (`revived`) end where they lie on a face
    /// that is followed (the patch matched a neighbour, or the face it lies on is this one,
    /// found again by a pass; of two revived onto one face, the later in the list stays).
    mutating func endCoasting(revived: [Int], coast: Int) {
        for i in revived {
            let r = tracks[i].box.rect
            let onAnother = tracks.indices.contains { j in
                j != i && tracks[j].isFound && TrackAssociation.lies(r, on: tracks[j].box.rect, policy: policy)
            }
            if onAnother {
                tracks[i].isFound = false
                tracks[i].lostFrames = coast // it ends (its box is on the other face now)
            }
        }
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
        return moves.isEmpty || moves[(moves.count - 1) / 2] < policy.stillDistance
    }

    /// Whether the scene may hold faces only tiles see, worth the tiles' sweep in one job: the
    /// whole-frame pass before it found a small face, or none. A scene of large faces only
    /// (people before a camera) sweeps its tiles in turn between whole-frame passes: in four
    /// cameras sharing two cores, a long job on each such scene held the lanes while faces came
    /// into view (report `enter-leave-occluded`, looped: 0.86 → 0.67–0.71, session 22's fine
    /// pass).
    var mayHideSmallFaces: Bool {
        guard let plan = planner.plan else { return false }
        return tracks.isEmpty || tracks.contains { plan.isSmall(max($0.box.width, $0.box.height)) }
    }

    /// What a pass on this frame takes closer looks for (nil: none): tiles planned and
    /// ``FaceTracker/Options/closerLooks`` on; a whole-frame pass's weak boxes too on the
    /// background schedule. (Read as fast as it goes, the inline schedule's first frame looks at
    /// every tile, and whole-frame closer looks cost 5–15% of the results a second.)
    func closerLooks(_ options: FaceTracker.Options) -> CloserLooks? {
        guard options.closerLooks, let plan = planner.plan, plan.tileScale > 0 else { return nil }
        return CloserLooks(
            tileScale: plan.tileScale, frameScale: options.schedule == .background ? policy.trustedSide / plan.smallFace : nil,
            policy: policy)
    }

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

    /// A pass starts on the newest frame: the history now starts there, and every track notes
    /// where it is, for matching the pass's boxes whenever they come.
    mutating func beginPass() {
        history.passStarts(on: frame)
        // A face looked for where its motion carries it is not there as far as the pass knows:
        // the pass neither judges it nor renews it (found again before the pass ends, it would
        // be judged missed by a pass that ran while it was hidden).
        for i in tracks.indices { tracks[i].passBox = tracks[i].coasting ? nil : (frame, tracks[i].box) }
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
            whole: whole, look: look, plan: planner.plan, passFrame: passFrame, frame: frame, options: options, policy: policy,
            reacquire: { [policy] face in
                Self.reacquire(face, passFrame: passFrame, frame: frame, gray: gray, history: history, options: options, policy: policy)
            })
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
        options: FaceTracker.Options, policy: TrackerPolicy
    ) -> Track? {
        let patchSize = options.patchSize
        if passFrame == frame {
            var track = Track(face: face, gray: gray, patchSize: patchSize, policy: policy)
            track.passBox = (passFrame, Box(face.bounds))
            return track
        }
        guard let history, let start = history.firstIndex(where: { $0.frame == passFrame }) else { return nil }
        var track = Track(face: face, gray: history[start].gray, patchSize: patchSize, policy: policy)
        // Where the track was in the pass's frame is the face's box: a later result from that
        // frame (the sweep's next tile) is matched with it there.
        track.passBox = (passFrame, Box(face.bounds))
        var previous = passFrame
        var span = 1
        for later in history[(start + 1)...] where track.isFound {
            // A thinned history steps over several frames at once: search as much wider.
            span = later.frame - previous
            let margin = min(options.searchMargin * Double(span), policy.widestCarriedMargin)
            _ = track.step(in: later.gray, margin: margin, minCorrelation: options.minCorrelation, policy: policy)
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
