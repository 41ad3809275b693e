/// What a ``FaceTracker`` looks at next, for both schedules: the whole frame, a tile, or the edge
/// a pan brings into view (``PassLook``), decided from the frame count, the
/// tiles, what was lost and what the scene behind the faces does. A value with no pixels and no
/// detector: tests drive it frame by frame.
///
/// Inline, whole-frame passes come every `interval` frames — further apart while passes change
/// nothing under a still camera (``FaceTracker/Options/quietInterval``: ``pace(base:changed:still:wholeFramePass:quiet:)``)
/// — and where a face large enough for them was lost; the first frame looks at every tile too; a
/// small face lost calls for the tile that holds it; and one tile takes its turn every
/// ``TrackerPolicy/inlineTileTurn`` intervals between whole-frame passes. On the background
/// schedule passes go back to back: the whole frame first, then tiles in turn
/// (``nextRegion()``), or every tile in one job (``FaceTracker/Options/sweepAtOnce``).
struct LookPlanner {
    let policy: TrackerPolicy
    /// The tiles for the current frame size (nil: not yet planned, or tiles off).
    var plan: TilePlan? = nil
    /// The frame of the last pass on schedule (0: none yet).
    var lastPass = 0
    /// Background: passes scheduled since the sweep started (a new scene or frame size starts
    /// the tracker over, with a planner of its own, and so a new sweep).
    var turns = 0
    var nextTile = 0
    /// Inline: the frame of the last tile's turn.
    var lastTilePass = 0
    /// Frames from one pass to the next now: inline, between whole-frame passes (0 until the
    /// first); background, between passes' starts (0 or 1: back to back).
    var passInterval = 0
    /// Passes that looked only at the entering edge since the last whole-frame pass
    /// (``FaceTracker/Options/edgeLooks``), and the frame of the last (0: none).
    var edgeLooksInARow = 0
    var lastEdgeLook = 0

    init(policy: TrackerPolicy) { self.policy = policy }

    /// Whether no pass has run on schedule yet (the first frame, or the first since a start over).
    var isFirst: Bool { lastPass == 0 }

    /// Plans the tiles for frames of this size (the detector shrinks the whole frame by `scale`)
    /// and starts the sweep; nothing if they are planned already.
    mutating func planTiles(width: Int, height: Int, scale: @autoclosure () -> Double) {
        guard plan?.width != width || plan?.height != height else { return }
        plan = TilePlan(width: width, height: height, scale: scale(), policy: policy)
        turns = 0
    }

    // MARK: Inline

    /// The inline schedule's looks for `frame` (its passes run on it before it is returned).
    /// `still`: the camera looks still, `tracksStill`: the faces do too, judged before this
    /// frame's passes; `lost`: faces lost in this frame, `lostInView` those of them not leaving
    /// at an edge; `pan`: the scene's motion under a pan.
    mutating func inlineLooks(
        frame: Int, interval: Int, still: Bool, tracksStill: Bool, lost: [Box], lostInView: [Box],
        pan: (dx: Double, dy: Double)?, edgeLooks: Int
    ) -> [PassLook] {
        let current = still ? max(interval, passInterval) : interval
        var looks: [PassLook] = []
        let first = isFirst
        let smallFace = plan?.smallFace ?? 0
        let lostLarge = lost.contains { max($0.width, $0.height) >= smallFace }
        // A small face lost against the edge it was moving towards has left: no tile is looked
        // at for it (under a sweeping camera, a tile's pass for every face leaving: tune
        // `crowd-sweep`, 0.57 → 0.47 passes a frame without them). A large one still calls for
        // a whole-frame pass, which finds faces coming in meanwhile (tune
        // `enter-leave-occluded`: 0.994 → 0.985 where it did not).
        let lostTiles = plan?.tilesHolding(lostInView.filter { max($0.width, $0.height) < smallFace }) ?? []
        if lostLarge || first || frame - lastPass >= current {
            // Under a pan, a pass on schedule may look only at the edge the camera brings into
            // view, at the tiles' scale: new faces come in there, and the faces in view are tracked.
            let gap = policy.edgeGapPasses * interval
            if !first, !lostLarge, let edge = edgeInsteadOfWholeFrame(frame: frame, gap: gap, most: edgeLooks, pan: pan) {
                looks = [edge]
            } else {
                looks = [.region(nil)]
                if first { looks += (plan?.tiles ?? []).map { .region($0) } }
            }
            lastPass = frame
            if first { lastTilePass = frame }
        }
        if !first { looks += lostTiles.map { .region($0) } }
        // The rotation keeps its turn beside tiles called for lost faces (faces lost again and
        // again — a panning crowd — held back the tiles where new small faces are). Tiles
        // stretch only while the camera looks still (report `crowd-pan`: recall 0.996 → 0.952
        // where tiles stretched whatever the camera did), and only while the faces are still
        // too (tune `enter-leave-occluded`: 0.987 against 0.973).
        let onSchedule = looks.contains(.region(nil)) || looks.contains(where: \.isEdge)
        let tileInterval = policy.inlineTileTurn * (still && tracksStill ? current : interval)
        if !onSchedule, let tiles = plan?.tiles, !tiles.isEmpty, frame - lastTilePass >= tileInterval {
            let tile = tiles[nextTile % tiles.count]
            if !looks.contains(.region(tile)) { looks.append(.region(tile)) }
            nextTile = (nextTile + 1) % tiles.count
            lastTilePass = frame
        }
        return looks
    }

    // MARK: Background

    /// The background schedule's next job on `frame`: its looks, and whether it is the tiles'
    /// sweep in one job. `sweepAtOnce`: the sweep's first tile may be every tile
    /// (``FaceTracker/Options/sweepAtOnce``) where the scene may hide small faces.
    mutating func backgroundLooks(
        frame: Int, sweepAtOnce: Bool, mayHideSmallFaces: Bool, pan: (dx: Double, dy: Double)?, edgeLooks: Int
    ) -> (looks: [PassLook], sweep: Bool) {
        let (region, sweepStarts) = nextRegion()
        let sweep = sweepStarts && sweepAtOnce && mayHideSmallFaces
        // Under a pan, a whole-frame pass may look only at the entering edge, as inline — not
        // the sweep's first (after a cut, the new scene's large faces first) — if the strip
        // holds what came in since the edge's last look.
        var look = PassLook.region(region)
        if region == nil {
            look =
                edgeInsteadOfWholeFrame(frame: frame, gap: edgeGap(frame: frame), most: turns > 1 ? edgeLooks : 0, pan: pan) ?? look
        }
        var looks = [look]
        if sweep, let tiles = plan?.tiles { looks = tiles.map { .region($0) } }
        lastPass = frame
        return (looks, sweep)
    }

    /// The region of the next background pass: the whole frame first, then a tile every
    /// ``TrackerPolicy/tileTurnWhileSweeping`` passes until each has been looked at once (small
    /// faces found soon after the start), then every ``TrackerPolicy/tileTurnAfterSweep``.
    /// `sweepStarts`: this is the sweep's first tile, where every tile may be looked at in one
    /// job instead (``sweepDone()``).
    mutating func nextRegion() -> (region: Rect?, sweepStarts: Bool) {
        guard let tiles = plan?.tiles, !tiles.isEmpty else { return (nil, false) }
        turns &+= 1
        let sweeping = turns <= policy.tileTurnWhileSweeping * tiles.count
        guard turns % (sweeping ? policy.tileTurnWhileSweeping : policy.tileTurnAfterSweep) == 0 else { return (nil, false) }
        defer { nextTile = (nextTile + 1) % tiles.count }
        return (tiles[nextTile % tiles.count], turns == policy.tileTurnWhileSweeping)
    }

    /// After a sweep's job (every tile looked at): tiles at their after-sweep turn from now on.
    mutating func sweepDone() {
        guard let tiles = plan?.tiles else { return }
        turns = max(turns, policy.tileTurnWhileSweeping * tiles.count)
    }

    // MARK: Pace

    /// Sets the frames to the next pass after this frame's: `base` again on any change (a new
    /// face, one missed or lost) or under a moving camera — a pan brings new faces into view all
    /// the time, small ones only tiles see; after a quiet whole-frame pass under a still camera,
    /// twice the interval so far, up to `quiet` (inline `base` is its interval, background 1).
    mutating func pace(base: Int, changed: Bool, still: Bool, wholeFramePass: Bool, quiet: Int) {
        if changed || !still {
            passInterval = base
        } else if wholeFramePass {
            passInterval = min(2 * max(passInterval, base), max(base, quiet))
        }
    }

    // MARK: The entering edge

    /// The look to take instead of a whole-frame pass: the entering edge (``enteringEdge(gap:pan:)``)
    /// while fewer than `most` such looks came since the last whole-frame pass; nil: the whole
    /// frame, which starts the count again.
    mutating func edgeInsteadOfWholeFrame(frame: Int, gap: Int, most: Int, pan: (dx: Double, dy: Double)?) -> PassLook? {
        guard edgeLooksInARow < most, let edge = enteringEdge(gap: gap, pan: pan) else {
            edgeLooksInARow = 0
            return nil
        }
        edgeLooksInARow += 1
        lastEdgeLook = frame
        return .edge(edge, scale: plan?.tileScale ?? 1)
    }

    /// Under a horizontal pan, the strip of the frame the camera brings into view (the side the
    /// scene moves away from), ``TrackerPolicy/edgeSide`` wide at the tiles' scale: where new
    /// faces come in, small ones included. nil where there is no such pan (a still camera, a
    /// tilt, a pan too fast for the strip to hold what came in over `gap` frames), or no tiles.
    func enteringEdge(gap: Int, pan: (dx: Double, dy: Double)?) -> Rect? {
        guard let plan, let width = Self.edgeWidth(plan, policy: policy), let pan else { return nil }
        let speed = abs(pan.dx)
        // A face too small for a whole-frame pass that came whole into view since the last look
        // lies whole in the strip (clear of its inner edge by the tiles' margin).
        guard speed >= policy.slowestPan, abs(pan.dy) <= policy.sidewaysPan * speed,
            speed * Double(gap) + plan.smallFace + policy.innerEdgeMargin <= Double(width)
        else { return nil }
        return Rect(x: pan.dx < 0 ? plan.width - width : 0, y: 0, width: width, height: plan.height)
    }

    /// The width of an edge strip in frames of `plan`'s size: ``TrackerPolicy/edgeSide`` at the
    /// tiles' scale, even; nil where there are no tiles or the strip would be over half the frame.
    static func edgeWidth(_ plan: TilePlan, policy: TrackerPolicy) -> Int? {
        guard plan.tileScale > 0 else { return nil }
        let width = Int((Double(policy.edgeSide) / plan.tileScale).rounded(.up)) & ~1
        return 2 * width <= plan.width ? width : nil
    }

    /// Background schedule: frames since the edge's last look, or (none yet, or longer ago than
    /// ``TrackerPolicy/staleEdgeLook`` passes' frames) ``TrackerPolicy/edgeGapPasses`` times the
    /// frames the last pass took.
    func edgeGap(frame: Int) -> Int {
        let pace = max(policy.leastPassFrames, frame - lastPass)
        let since = frame - lastEdgeLook
        return lastEdgeLook > 0 && since <= policy.staleEdgeLook * pace ? since : policy.edgeGapPasses * pace
    }
}
