/// How one detection pass's faces join the tracks: which track each box renews, which tracks
/// the pass judges missed (and which go), which boxes start tracks, and which of two tracks on
/// one face stays. A value with no pixels: a pass's face enters the current frame only through
/// `reacquire` (the tracker carries it by correlation from the pass's frame; tests place it).
struct TrackAssociation {
    /// The pass as run, and as judged: a tile's pass keeps only the small faces it saw whole.
    let whole: DetectionPass
    let pass: DetectionPass
    /// The tile the pass ran on (nil: the whole frame), and the tiles of this frame size.
    let region: Rect?
    let plan: TilePlan?
    /// The frame the pass ran on, and the current one.
    let passFrame: Int
    let frame: Int
    let options: FaceTracker.Options
    let policy: TrackerPolicy
    let reacquire: (Face) -> Track?

    init(
        whole: DetectionPass, look: PassLook, plan: TilePlan?, passFrame: Int, frame: Int, options: FaceTracker.Options,
        policy: TrackerPolicy = .standard, reacquire: @escaping (Face) -> Track?
    ) {
        self.whole = whole
        var region: Rect? = nil
        if case .region(let tile) = look { region = tile }
        if case .edge(let strip, _) = look { region = strip }
        // A tile's pass is for small faces: only those it saw whole, and it judges the small
        // tracks lying whole inside it. A whole-frame pass judges the tracks large enough for
        // it to see. (A tile's view of a large face is often a part of it: a face entering at
        // the frame's edge, or half covered.)
        var pass = whole
        if let region, let plan {
            pass.faces = plan.small(plan.whole(pass.faces, in: region))
            pass.candidates = plan.small(plan.whole(pass.candidates, in: region))
        }
        self.pass = pass
        self.region = region
        self.plan = plan
        self.passFrame = passFrame
        self.frame = frame
        self.options = options
        self.policy = policy
        self.reacquire = reacquire
    }

    /// The tracks after this pass.
    func merge(_ before: [Track]) -> [Track] {
        var changed = false
        return merge(before, changed: &changed)
    }

    /// The tracks after this pass; `changed` is set when the pass changed what is tracked: a
    /// new face, a face it judged missed, or a track ended (what keeps passes frequent).
    func merge(_ before: [Track], changed: inout Bool) -> [Track] {
        var tracks = before
        var trackTaken = Set<Int>()
        let found = pass.faces
        let faceTaken = confirm(&tracks, with: found, trackTaken: &trackTaken, reported: true)
        // Established tracks no face confirmed may be confirmed by a weaker box.
        let established = Set(tracks.indices.filter { tracks[$0].reports >= options.establishedAfter })
        _ = confirm(&tracks, with: pass.candidates, only: established.subtracting(trackTaken), trackTaken: &trackTaken, reported: false)
        // A face lost and looked for where its motion carries it is not judged: the pass not
        // seeing it says no more than the correlation did (it may be behind something); it ends
        // unless found again (``FaceTracker/Options/coastFrames``).
        for i in tracks.indices where !trackTaken.contains(i) && !tracks[i].coasting {
            guard let then = boxThen(tracks[i]) else { continue }
            // A small face a whole-frame pass reported (weakly, beside a face it half saw) and
            // no tile has: judged by whole-frame passes too, else it lived until its tile came.
            let unsure = !judgedAsTiles && !tracks[i].seenByTile && tracks[i].reports < options.establishedAfter
            if judges(then) || unsure {
                tracks[i].missedPasses += 1
                changed = true
            }
        }
        tracks.removeAll { $0.missedPasses > options.maxMissedPasses }
        for (fi, face) in found.enumerated() where !faceTaken.contains(fi) && !isSecondBox(face) {
            if var track = reacquire(face) {
                track.seenByTile = judgedAsTiles
                tracks.append(track)
                changed = true
            }
        }
        let kept = Self.withoutDuplicates(tracks, policy: policy)
        if kept.count != before.count { changed = true }
        return kept
    }

    /// Whether this pass is a tile's (or an edge strip's, judged as a tile): it deals with small
    /// faces as tiles do, and a face it reports counts as seen by a tile.
    var judgedAsTiles: Bool { region != nil }

    /// Whether this pass judges a track at `box` (counts it missed when no box renews it): a
    /// tile judges only what it would report, what it sees whole and small (a face by its edge
    /// is the tile beside it's, and was judged missed here while this tile left it out); a
    /// whole-frame pass what is large enough for it to see.
    func judges(_ box: Box) -> Bool {
        if let region, let plan { return plan.seesWhole(region, box) && plan.isSmall(max(box.width, box.height)) }
        return max(box.width, box.height) >= (plan?.smallFace ?? 0)
    }

    /// Where a track was when the pass's frame was taken (nil: unknown, so the pass cannot judge it).
    func boxThen(_ t: Track) -> Box? {
        if passFrame == frame { return t.box }
        guard let then = t.passBox, then.frame == passFrame else { return nil }
        return then.box
    }

    /// Track–box pairs that overlap enough, the closest first; `only` nil: every track.
    func pairs(_ tracks: [Track], _ boxes: [Face], only: Set<Int>? = nil) -> [(track: Int, face: Int)] {
        var pairs: [(track: Int, face: Int, overlap: Double)] = []
        for (ti, t) in tracks.enumerated() where only?.contains(ti) ?? true {
            guard let then = boxThen(t) else { continue }
            for (fi, f) in boxes.enumerated() {
                let overlap = then.rect.iou(f.bounds)
                if overlap >= options.matchOverlap { pairs.append((ti, fi, overlap)) }
            }
        }
        return pairs.sorted { $0.overlap > $1.overlap }.map { ($0.track, $0.face) }
    }

    /// Renews each track from its closest box, each box once, and returns the boxes taken.
    /// `reported`: the boxes are faces the detector reported (they count towards establishing);
    /// else weaker boxes, which renew a track from the box but do not count towards establishing.
    func confirm(
        _ tracks: inout [Track], with boxes: [Face], only: Set<Int>? = nil, trackTaken: inout Set<Int>, reported: Bool
    ) -> Set<Int> {
        var taken = Set<Int>()
        for pair in pairs(tracks, boxes, only: only) where !trackTaken.contains(pair.track) && !taken.contains(pair.face) {
            taken.insert(pair.face)
            guard var renewed = reacquire(boxes[pair.face]) else { continue }
            renewed.reports = tracks[pair.track].reports + (reported ? 1 : 0)
            renewed.seenByTile = tracks[pair.track].seenByTile || (reported && judgedAsTiles)
            // A box from this very frame has no motion of its own yet: the face keeps moving as
            // it did (where it goes if lost next: ``FaceTracker/Options/coastFrames``).
            if renewed.motion == (0, 0) { renewed.motion = tracks[pair.track].motion }
            trackTaken.insert(pair.track)
            tracks[pair.track] = renewed
        }
        return taken
    }

    /// A barely confident box partly on a stronger face's head, in the same pass, is the
    /// network's second box for that face (beside it, overlapping too little for suppression),
    /// not a face of its own: it starts no track. Checked against every face the pass reported:
    /// a tile's pass keeps only small faces, and the large face a second box lies on is not
    /// among them.
    func isSecondBox(_ face: Face) -> Bool {
        let score = face.confidence ?? 1
        guard score < policy.secondBoxBelow else { return false }
        return whole.faces.contains {
            ($0.confidence ?? 1) > score
                && Double(Self.head($0.bounds, share: policy.headShare).intersection(face.bounds).area) >= policy.secondBoxOnHead
                    * Double(face.bounds.area)
        }
    }

    /// The head around a face's box, where the network's second boxes for it lie: the box
    /// grown by `share` of its width each side and of its height above
    /// (``TrackerPolicy/headShare``). A second box on a synthetic clip's hair lay 23% on the
    /// face's box and was followed for the rest of the clip (report `moving`, paced: precision
    /// 0.932, 1.000 with the head; report and tune, as read and paced, no face lost).
    static func head(_ box: Rect, share: Double) -> Rect {
        let side = Int(Double(box.width) * share)
        let top = Int(Double(box.height) * share)
        return Rect(x: box.x - side, y: box.y - top, width: box.width + 2 * side, height: box.height + top)
    }

    /// Tracks overlapping by more than ``TrackerPolicy/duplicateOverlap`` are one face: found
    /// faces are kept first, then those missed by fewer passes; a lost face lying on a kept
    /// found one goes too.
    static func withoutDuplicates(_ tracks: [Track], policy: TrackerPolicy = .standard) -> [Track] {
        var kept: [Track] = []
        // Found faces first: a lost face's box (where its motion carried it) never hides one.
        for t in tracks.sorted(by: { ($0.isFound ? 0 : 1, $0.missedPasses) < ($1.isFound ? 0 : 1, $1.missedPasses) }) {
            let r = t.box.rect
            if kept.contains(where: { $0.box.rect.iou(r) > policy.duplicateOverlap }) { continue }
            // A lost face lying on a followed one is that face, or gone.
            if !t.isFound, kept.contains(where: { $0.isFound && lies(r, on: $0.box.rect, policy: policy) }) { continue }
            kept.append(t)
        }
        return kept
    }

    /// Whether a lost face's box `r` lies on a followed face's `other` (overlapping by more than
    /// ``TrackerPolicy/liesOnOverlap``): it is that face, or gone.
    static func lies(_ r: Rect, on other: Rect, policy: TrackerPolicy = .standard) -> Bool {
        other.iou(r) > policy.liesOnOverlap
    }
}
