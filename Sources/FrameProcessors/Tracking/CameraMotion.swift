import FrameCore

/// Whether the camera is moving, judged from the scene behind the faces: a few textured patches
/// clear of every face (*anchors*), followed from frame to frame by the same correlation as
/// the faces. Faces alone cannot tell a panning camera from people moving in front of a still
/// one; the scene can. Under a still camera passes may go further apart however the faces
/// move (they are tracked); under a moving one new faces come into view all the time and
/// passes keep their pace.
///
/// Anchors are placed on a 4 x 3 grid, one per cell whose centre patch is clear of faces and
/// has enough contrast to be found again (a plain wall or sky has not), the most contrasted
/// first. The camera counts as moving when half of them or more have moved ``TrackerPolicy/stillDistance``
/// over the last ``TrackerPolicy/stillWindow`` frames, or are lost. After each whole-frame pass they are placed
/// again, clear of where the faces are now, unless they all moved together (a pan: kept, so
/// that a slow one is judged over the whole window whatever the passes' pace); and whenever
/// half are lost (carried out of view, covered). With fewer than ``TrackerPolicy/minimumAnchors`` the scene
/// cannot judge (faces everywhere, a blank wall): the faces' own motion is the fallback
/// (``TrackerState/tracksStill``), and so it is where the anchors disagree (some moved, some
/// not: something passed over them, not a pan) — ``TrackerState/cameraStill``.
struct CameraMotion {
    private(set) var anchors: [Track] = []
    /// Each anchor's positions over the last ``TrackerPolicy/stillWindow`` frames and this one, oldest first.
    private var paths: [[(x: Double, y: Double)]] = []

    /// The anchors' numbers (``TrackerPolicy/maximumAnchors``…``TrackerPolicy/stillWindow``).
    let policy: TrackerPolicy

    init(policy: TrackerPolicy = .standard) { self.policy = policy }

    /// The judgement of the anchors before the last placing, which stands until the new ones
    /// have been followed a whole ``TrackerPolicy/stillWindow`` (nil: none, the faces judge meanwhile) — unless
    /// they all moved already, or most are lost. A pan under four pixels a frame looks still
    /// over a single frame.
    private var inherited: Bool? = nil

    /// Whether anchors were ever placed (after the first whole-frame pass: clear of its faces).
    private(set) var placed = false

    /// Whether enough anchors were placed to judge.
    var canJudge: Bool { anchors.count >= policy.minimumAnchors }

    /// Whether half the anchors or more are lost: carried out of view, or covered.
    var mostLost: Bool { canJudge && 2 * anchors.filter(\.isFound).count <= anchors.count }

    /// Places anchors in `gray` clear of `faces` (image px).
    mutating func place(in gray: PixelBuffer, avoiding faces: [Box], patchSize: Int) {
        inherited = placed ? isStill : nil
        anchors.removeAll(keepingCapacity: true)
        placed = true
        let side = max(policy.smallestAnchor, Int(Double(min(gray.width, gray.height)) * policy.anchorShare))
        // A face's box grown each way (`faceSurroundShare`): the hair, the neck and the shoulders
        // move with it.
        let grow = policy.faceSurroundShare
        let keepOut = faces.map {
            Box(x: $0.x - $0.width * grow, y: $0.y - $0.height * grow, width: $0.width * (1 + 2 * grow), height: $0.height * (1 + 2 * grow))
        }
        var candidates: [(contrast: Double, anchor: Track)] = []
        let (columns, rows) = (policy.anchorColumns, policy.anchorRows)
        for row in 0..<rows {
            for column in 0..<columns {
                // The cell's centre.
                let box = Box(
                    x: Double((2 * column + 1) * gray.width / (2 * columns) - side / 2),
                    y: Double((2 * row + 1) * gray.height / (2 * rows) - side / 2),
                    width: Double(side), height: Double(side))
                if keepOut.contains(where: { $0.overlaps(box) }) { continue }
                let anchor = Track(face: Face(bounds: box.rect), gray: gray, patchSize: patchSize, policy: policy)
                guard anchor.isFound else { continue }
                let contrast = Self.contrast(anchor.patch)
                if contrast >= policy.minimumContrast { candidates.append((contrast, anchor)) }
            }
        }
        anchors = candidates.sorted { $0.contrast > $1.contrast }.prefix(policy.maximumAnchors).map(\.anchor)
        paths = anchors.map { [($0.box.x, $0.box.y)] }
    }

    /// Follows every anchor into `gray`, the next frame.
    mutating func step(in gray: PixelBuffer, minCorrelation: Double) {
        for i in anchors.indices {
            // At its size only: the scene behind the faces does not come closer (a zoom, or
            // something passing in front, is not a still camera either).
            _ = anchors[i].step(
                in: gray, margin: policy.anchorSearchMargin, minCorrelation: minCorrelation, rescaling: false, policy: policy)
            paths[i].append((anchors[i].box.x, anchors[i].box.y))
            if paths[i].count > policy.stillWindow + 1 { paths[i].removeFirst() }
        }
    }

    /// Whether the camera looks still: more than half the anchors found and within
    /// ``TrackerPolicy/stillDistance`` of where they were ``TrackerPolicy/stillWindow`` frames ago. nil: too few anchors to
    /// judge, or placed less than ``TrackerPolicy/stillWindow`` frames ago with no judgement before them.
    var isStill: Bool? {
        guard canJudge else { return nil }
        // Most anchors lost: a pan faster than their search, or something large in front of
        // the camera. And anchors that all moved already, before a whole window, have moved.
        if mostLost || moveTogether { return false }
        if !judged { return inherited }
        return 2 * anchors.indices.filter { anchors[$0].isFound && !moved($0) }.count > anchors.count
    }

    /// Whether the anchors found all moved (a pan carries every one of them; a passer-by, or
    /// an object carrying one along, moves some and not others).
    var moveTogether: Bool {
        let found = anchors.indices.filter { anchors[$0].isFound }
        return !found.isEmpty && found.allSatisfy(moved)
    }

    /// The scene's motion a frame under a pan: the median of the found anchors' motion over
    /// the frames they have been followed (up to ``TrackerPolicy/stillWindow``), while they all moved together
    /// and most are found. nil otherwise (no pan, or too fast to follow).
    var pan: (dx: Double, dy: Double)? {
        guard canJudge, !mostLost, moveTogether else { return nil }
        let moves = anchors.indices.filter { anchors[$0].isFound && paths[$0].count > 1 }.map { i in
            let (from, to, steps) = (paths[i][0], paths[i][paths[i].count - 1], Double(paths[i].count - 1))
            return (dx: (to.x - from.x) / steps, dy: (to.y - from.y) / steps)
        }
        guard !moves.isEmpty else { return nil }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        return (median(moves.map(\.dx)), median(moves.map(\.dy)))
    }

    /// Whether the anchors have been followed a whole ``TrackerPolicy/stillWindow`` since they were placed.
    var judged: Bool { paths.first.map { $0.count > policy.stillWindow } ?? false }

    private func moved(_ i: Int) -> Bool {
        let (from, to) = (paths[i][0], paths[i][paths[i].count - 1])
        return max(abs(to.x - from.x), abs(to.y - from.y)) >= policy.stillDistance
    }

    static func contrast(_ patch: [UInt8]) -> Double {
        guard !patch.isEmpty else { return 0 }
        var sum = 0.0
        var squares = 0.0
        for value in patch {
            sum += Double(value)
            squares += Double(value) * Double(value)
        }
        let mean = sum / Double(patch.count)
        return (max(0, squares / Double(patch.count) - mean * mean)).squareRoot()
    }
}
