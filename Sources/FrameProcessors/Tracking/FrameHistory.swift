import FrameCore

/// The background schedule's memory of frames: gray images from the frame of the pass under
/// way to the newest, newest last, so a pass's faces can be carried to the current frame
/// however late it finishes, and the copy of a borrowed frame the pass runs on. Past
/// ``TrackerPolicy/historyLength`` images every other one between the first and the last is
/// let go: memory stays bounded and a slow pass is carried forward in longer steps. Images let
/// go are reused for the next frames (no allocation a frame).
struct FrameHistory {
    let length: Int
    private(set) var frames: [(frame: Int, gray: PixelBuffer)] = []
    /// Gray images let go, reused for the next ones.
    private var spareGrays: [PixelBuffer] = []
    /// The copy of a borrowed frame the last pass ran on, reused for the next pass.
    private var passImage: PixelBuffer? = nil

    init(length: Int) { self.length = length }

    /// Keeps a copy of frame `frame`'s gray image (the frame itself goes back to its pool).
    mutating func remember(_ gray: PixelBuffer, frame: Int) {
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
        frames.append((frame, slot))
        if frames.count > length {
            // Thin out: keep the first (the pass's frame), the last, and every other between.
            var thinned = [frames[0]]
            for i in 1..<(frames.count - 1) {
                if i % 2 == 0 { thinned.append(frames[i]) } else { recycle(frames[i].gray) }
            }
            thinned.append(frames[frames.count - 1])
            frames = thinned
        }
    }

    /// A pass starts on `frame`, the newest: the history now starts there.
    mutating func passStarts(on frame: Int) {
        while let first = frames.first, first.frame < frame { recycle(frames.removeFirst().gray) }
    }

    /// Keeps a let-go image for the next frames: as many as one thinning or one pass's start
    /// frees and the frames after it reuse (half the history); the rest are freed.
    private mutating func recycle(_ gray: PixelBuffer) {
        if spareGrays.count < length / 2 { spareGrays.append(gray) }
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
}
