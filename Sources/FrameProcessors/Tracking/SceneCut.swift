import FrameCore

/// Whether a frame shows another scene than the one before it (an edited video's cut, the next
/// photo of a slideshow), from the image itself: each frame's luma is averaged over a coarse
/// grid and scaled by the frame's mean (a change of exposure is not a cut); two frames whose
/// grids differ, cell by cell, by more than a threshold of the mean are two scenes. A pan
/// moves a cell's content by a fraction of a cell from one frame to the next and changes its
/// mean a little; a cut changes every cell. The grid and the threshold are the policy's
/// (``TrackerPolicy/cutThreshold``).
///
/// Two scenes alike in their coarse luma (two photos on one background) differ by less than
/// that threshold, which ordinary frames of a scene whose every frame is new reach. What tells
/// them apart is what came before: a scene that held still changing at once by several times
/// what it moved over the last frames is another scene (``TrackerPolicy/cutJump``, at least
/// ``TrackerPolicy/cutFloor``).
struct SceneCut {
    let policy: TrackerPolicy
    private var last: [Double]? = nil
    /// The distances between the last frames (at most ``TrackerPolicy/cutWindow``).
    private var recent: [Double] = []

    init(policy: TrackerPolicy = .standard) { self.policy = policy }

    /// Takes this frame's grid; returns whether it is another scene than the last frame's
    /// (false for the first frame).
    mutating func isCut(_ gray: PixelBuffer) -> Bool {
        guard let grid = Self.grid(gray, policy: policy) else {
            last = nil
            recent = []
            return false
        }
        defer { last = grid }
        guard let last else { return false }
        let distance = Self.distance(last, grid)
        // Judged against a whole window of the scene's own frames: none at the start, none just
        // after a cut (the window starts over with the new scene).
        let moved = recent.count >= policy.cutWindow ? recent.max() : nil
        // (Two comparisons: a rule turned off by an infinite jump stays off over a scene that
        // did not move at all, where infinity times 0 is not a number.)
        let jumped = moved.map { distance > policy.cutFloor && distance > policy.cutJump * $0 } ?? false
        if distance > policy.cutThreshold || jumped {
            recent = []
            return true
        }
        recent.append(distance)
        if recent.count > policy.cutWindow { recent.removeFirst() }
        return false
    }

    /// The mean absolute difference of two grids.
    static func distance(_ a: [Double], _ b: [Double]) -> Double {
        zip(a, b).reduce(0) { $0 + abs($1.0 - $1.1) } / Double(a.count)
    }

    /// Each cell's mean luma over the frame's (all 0 for a frame with no light at all; nil for a
    /// frame too small for the grid). A video-range frame's black (luma 16) is a uniform grid.
    static func grid(_ gray: PixelBuffer, policy: TrackerPolicy = .standard) -> [Double]? {
        let (columns, rows, step) = (policy.cutGridColumns, policy.cutGridRows, policy.cutSampleStep)
        let (w, h) = (gray.width, gray.height)
        guard w >= columns * step, h >= rows * step else { return nil }
        var cells = [Double](repeating: 0, count: columns * rows)
        gray.withUnsafeBytes(ofPlane: 0) { bytes, plane in
            for row in 0..<rows {
                for column in 0..<columns {
                    var sum = 0
                    var count = 0
                    for y in stride(from: row * h / rows, to: (row + 1) * h / rows, by: step) {
                        let line = y * plane.bytesPerRow
                        for x in stride(from: column * w / columns, to: (column + 1) * w / columns, by: step) {
                            sum += Int(bytes[line + x])
                            count += 1
                        }
                    }
                    cells[row * columns + column] = Double(sum) / Double(max(1, count))
                }
            }
        }
        let mean = cells.reduce(0, +) / Double(cells.count)
        guard mean >= 1 else { return cells.map { _ in 0 } }
        return cells.map { $0 / mean }
    }
}
