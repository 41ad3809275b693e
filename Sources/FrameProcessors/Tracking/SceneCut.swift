import FrameCore

/// Whether a frame shows another scene than the one before it (an edited video's cut, the next
/// photo of a slideshow), from the image itself: each frame's luma is averaged over a coarse
/// grid and scaled by the frame's mean (a change of exposure is not a cut); two frames whose
/// grids differ, cell by cell, by more than a threshold of the mean are two scenes. A pan
/// moves a cell's content by a fraction of a cell from one frame to the next and changes its
/// mean a little; a cut changes every cell. The grid and the threshold are the policy's
/// (``TrackerPolicy/cutThreshold``).
struct SceneCut {
    let policy: TrackerPolicy
    private var last: [Double]? = nil

    init(policy: TrackerPolicy = .standard) { self.policy = policy }

    /// Takes this frame's grid; returns whether it is another scene than the last frame's
    /// (false for the first frame).
    mutating func isCut(_ gray: PixelBuffer) -> Bool {
        guard let grid = Self.grid(gray, policy: policy) else {
            last = nil
            return false
        }
        defer { last = grid }
        guard let last else { return false }
        return Self.distance(last, grid) > policy.cutThreshold
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
