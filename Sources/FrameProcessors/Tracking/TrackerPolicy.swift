/// Every constant of face tracking in one value: the knobs a user turns are in
/// ``FaceTracker/Options``; these are the ones the design rests on, each chosen on the corpus's
/// tune split (docs/performance.md), never on the report split. A test or an ablation gives the
/// tracker another policy (`FaceTracker(detector:options:scheduler:policy:)`); the product
/// always runs ``standard``.
package struct TrackerPolicy: Sendable, Equatable {
    package static let standard = TrackerPolicy()

    // MARK: Following a face by its patch (`Track`)

    /// A face found at neither its size nor these (its size times each) is lost: a face coming
    /// closer or going away grows or shrinks past its patch in a few frames, and each time it
    /// was lost a pass was called for it (report `sizes`: 41 of 117 passes after the first
    /// frame). Tried only where the face is not found at its size.
    package var growths = [1.1, 1 / 1.1]
    /// The confidence of the detector's last box for a face below which the face, once lost, is
    /// not looked for again (``FaceTracker/Options/coastFrames``): a weak box is often part of a
    /// face cut by something in front of it, and its patch matched beside the face where it came
    /// out (report, paced: boxes beside the face scored 0.07–0.49, for up to seven frames).
    package var sureConfidence = 0.6
    /// The smallest side (px) of a patch or of the part of it in view that is followed.
    package var smallestPatch = 4
    /// A patch is followed while at least this share of it each way is in view; a lost face
    /// carried this share or more out of the frame has left (it is not looked for at a cost
    /// every frame).
    package var inViewShare = 0.5
    /// The widest search margin (in face sizes) when a pass's face is carried through a
    /// thinned history, several frames a step.
    package var widestCarriedMargin = 2.0
    /// Gray images kept for carrying a background pass's faces forward (past it, every other
    /// image between the first and the last is let go): a 720p camera's history ~8 MB
    /// (docs/performance.md, "Memory of a fleet").
    package var historyLength = 8

    // MARK: Sweeps

    /// Background schedule: a tile every this many passes until each has been looked at once,
    /// then every `tileTurnAfterSweep` (whole-frame passes, which follow large and moving faces,
    /// stay frequent). Tiles back to back found a still crowd's small faces sooner on a busy
    /// machine (tune, paced, two busy loops: recall 0.78 → 0.83) but faces entering meanwhile
    /// waited for the sweep's end (0.6 → 0.3).
    package var tileTurnWhileSweeping = 2
    package var tileTurnAfterSweep = 3
    /// Inline schedule: a tile's turn comes every this many whole-frame intervals.
    package var inlineTileTurn = 2

    // MARK: Tiles (`TilePlan`)

    /// The side (px at the network's input) from which a whole-frame pass is trusted to see a face.
    package var trustedSide = 32.0
    /// Below this scale a whole-frame pass shrinks a frame enough to leave faces it cannot see
    /// (tiles).
    package var shrinkingScale = 0.9
    /// Tiles deal with faces up to this many times the small-face side (a little over it, so a
    /// face growing past it is judged by both kinds of pass for a while).
    package var tileFaceLimit = 1.5
    /// A face this close (px) to a tile's inner edge is cut there: the neighbour sees it whole.
    package var innerEdgeMargin = 2.0
    /// A tile is shrunk this many times less than the whole frame (at most to the frame's own
    /// scale): a face half the whole-frame pass's trusted side is at it in a tile.
    package var tileZoom = 2.0
    /// Frames smaller than this (px, each way) get no tiles.
    package var smallestTiledFrame = 64
    /// The side of an edge strip across a pan at the network's input (px): at 720p it holds a
    /// face too small for a whole-frame pass (64 px) that came into view over the 8 frames
    /// between edge looks inline, under a pan of up to ~11 px a frame.
    package var edgeSide = 160
    /// The strip must hold a face that came whole into view over this many passes' frames
    /// (inline: intervals; background: the last pass's frames, when the edge was not looked at
    /// within `staleEdgeLook` of them).
    package var edgeGapPasses = 2
    package var staleEdgeLook = 4

    // MARK: Closer looks (`CloserLooks`)

    /// At most this many closer looks a pass, the strongest boxes first.
    package var closerLooksPerPass = 8
    /// The least confidence of a face a whole-frame pass's closer look finds, as of a box the
    /// second-box rule takes for a face of its own. At the confirmation threshold (as for
    /// tiles), tune precision as read was `enter-leave-occluded` 0.975 against 1.000 and
    /// `crowd` 0.985 against 0.990, and paced recall no better.
    package var wholeFrameCloserFloor = 0.5
    /// A closer look enlarges a weak box's surroundings this many times the tile's scale, the
    /// box's face to this many times the trusted side (at most).
    package var closerZoom = 2.0
    /// A closer look's face belongs to the weak box it looked at from this IoU.
    package var closerMatchOverlap = 0.3

    // MARK: Joining a pass's faces with the tracks (`TrackAssociation`)

    /// Below this confidence, a box lying at least `secondBoxOnHead` of its area on a stronger
    /// face's head is that face's second box (report `moving`, paced: precision 0.932 → 1.000).
    package var secondBoxBelow = 0.5
    package var secondBoxOnHead = 0.25
    /// The head around a face's box, where the network's second boxes lie: the box grown by
    /// this share of its width each side and of its height above (hair, ears). A second box on
    /// a synthetic clip's hair lay 23% on the face's box.
    package var headShare = 0.25
    /// Two tracks overlapping by more than this IoU are one face.
    package var duplicateOverlap = 0.5
    /// A lost face's box overlapping a followed face's by more than this IoU lies on it.
    package var liesOnOverlap = 0.3

    // MARK: The scene behind the faces (`CameraMotion`)

    /// Anchors kept at most: enough for a majority that a face walking across one cannot sway.
    package var maximumAnchors = 6
    /// Fewer anchors than this leave the judgement to the faces.
    package var minimumAnchors = 3
    /// Anchors are looked for on a grid of this many cells.
    package var anchorColumns = 4
    package var anchorRows = 3
    /// An anchor's side: this share of the frame's shorter side, at least `smallestAnchor` px.
    package var anchorShare = 1.0 / 8
    package var smallestAnchor = 16
    /// Anchors keep clear of a face's box grown by this share of its size each way: the hair,
    /// the neck and the shoulders move with it.
    package var faceSurroundShare = 0.5
    /// The contrast (standard deviation of gray levels) below which a patch is too plain to be
    /// found again reliably.
    package var minimumContrast = 10.0
    /// How far an anchor is searched for beyond where it was, as a fraction of its side, plus
    /// its last motion (a camera at 4 px a frame at 720p moves a tenth of an anchor's side).
    package var anchorSearchMargin = 0.25
    /// An anchor that moved this far (px, either way) over `stillWindow` frames has moved; a
    /// face this far from where a pass last put it too.
    package var stillDistance = 4.0
    /// The frames over which an anchor's motion is judged: a pan of more than a pixel a frame
    /// counts (tune: 8 frames held passes at their pace through `crowd-pan`'s slow ends, 0.47
    /// passes a frame against 0.45, for no recall).
    package var stillWindow = 4
    /// A pan slower than this (px a frame) has no entering edge worth a look of its own.
    package var slowestPan = 1.0
    /// A face leaving the frame moves at least this many px a frame towards the edge.
    package var leavingSpeed = 0.5
    /// A box this close (px) to the frame's edge touches it (a face leaving has reached it).
    package var edgeTouch = 1.0
    /// A pan is sideways, with an entering edge to look at, while it moves up or down at most
    /// this share of its speed across.
    package var sidewaysPan = 0.5
    /// The frames a pass is taken to span at least, in the background schedule's edge gap (a
    /// pass on every frame still leaves the strip a frame's pan behind).
    package var leastPassFrames = 2

    // MARK: Cuts seen in the image (`SceneCut`)

    /// The grid of mean luma a frame is reduced to (16 x 9 cells), every `cutSampleStep`th
    /// pixel each way (a 720p frame: ~57,600 reads).
    package var cutGridColumns = 16
    package var cutGridRows = 9
    package var cutSampleStep = 4
    /// The mean absolute difference of two grids, in units of the frame's mean luma, above
    /// which they are two scenes (tune split: docs/performance.md, "Cuts").
    package var cutThreshold = 0.27
    /// A frame that differs from the last by more than `cutJump` times the most the scene moved
    /// over the `cutWindow` frames before (judged once the scene has shown that many: at the
    /// start and after each cut), and by more than `cutFloor`, is another scene too: a
    /// still scene's next photo on the same background (tune `slideshow`: cuts of 0.036–0.19
    /// after frames of 0.000; within the video kinds' scenes frames move 0.003–0.047 and no
    /// frame jumps so, docs/performance.md, "Cuts").
    package var cutJump = 4.0
    package var cutFloor = 0.03
    package var cutWindow = 8

    package init() {}
}
