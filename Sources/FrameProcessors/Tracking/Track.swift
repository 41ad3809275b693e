import COpenCVShim
import FrameCore

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

    init(face: Face, gray: PixelBuffer, patchSize: Int, policy: TrackerPolicy = .standard) {
        // The part in the frame (a box may stand out past an edge): the box is what the patch
        // shows, which a face leaving at an edge relies on (``cut(_:scale:width:height:)``).
        box = Box(face.bounds.clamped(width: gray.width, height: gray.height))
        detected = face
        detectedBox = box
        patch = []
        takePatch(from: gray, patchSize: patchSize, smallest: policy.smallestPatch)
    }

    /// The face as reported: the detector's face moved to where the track is now, and scaled to
    /// the size it is followed at.
    var face: Face {
        let sx = box.width / max(1, detectedBox.width)
        let sy = box.height / max(1, detectedBox.height)
        return detected.mapped(scaleX: sx, scaleY: sy, dx: box.x - sx * detectedBox.x, dy: box.y - sy * detectedBox.y)
    }

    /// The patch the track looks for: the face's box shrunk so its longer side is `patchSize`.
    mutating func takePatch(from gray: PixelBuffer, patchSize: Int, smallest: Int) {
        let r = box.rect.clamped(width: gray.width, height: gray.height)
        guard r.width >= smallest, r.height >= smallest else {
            isFound = false
            return
        }
        patchScale = min(1, Double(patchSize) / Double(max(r.width, r.height)))
        patchWidth = max(smallest, Int((Double(r.width) * patchScale).rounded()))
        patchHeight = max(smallest, Int((Double(r.height) * patchScale).rounded()))
        guard let small = try? Self.shrink(gray, r, width: patchWidth, height: patchHeight) else {
            isFound = false
            return
        }
        patch = small.packedBytes()
    }

    /// Finds the patch near where the face was, at its size or (`rescaling`) at
    /// ``TrackerPolicy/growths`` of it (the box and the patch's scale follow); false when the
    /// best match is too weak. A face lost fewer than `coast` frames ago is looked for where its
    /// last motion carries it, at its size, and found again at `revival` or better — unless the
    /// detector's last box for it was below ``TrackerPolicy/sureConfidence``.
    mutating func step(
        in gray: PixelBuffer, margin: Double, minCorrelation: Double, rescaling: Bool = true, coast: Int = 0, revival: Double = 1,
        policy: TrackerPolicy = .standard
    ) -> Bool {
        if isFound {
            let found = find(in: gray, margin: margin, minCorrelation: minCorrelation, rescaling: rescaling, policy: policy)
            if !found { coasting = coast > 0 && !patch.isEmpty && (detected.confidence ?? 1) >= policy.sureConfidence }
            return found
        }
        guard coasting, lostFrames < coast else {
            coasting = false
            return false
        }
        lostFrames += 1
        let velocity = motion
        box = box.moved(velocity.dx, velocity.dy)
        // Carried out of the frame (``TrackerPolicy/inViewShare``): it has left.
        let inView = Double(box.rect.clamped(width: gray.width, height: gray.height).area)
        guard inView >= policy.inViewShare * Double(box.rect.area) else {
            coasting = false
            return false
        }
        guard find(in: gray, margin: margin, minCorrelation: revival, rescaling: false, policy: policy) else { return false }
        // `find` measured the correction to where the motion carried the box.
        motion = (velocity.dx + motion.dx, velocity.dy + motion.dy)
        return true
    }

    /// Whether it is leaving the frame: its box (the part in view) against an edge it moves
    /// towards (``TrackerPolicy/leavingSpeed`` a frame or more), more than across (a face resting against an edge,
    /// or sliding along it, has not left).
    func isLeaving(width: Int, height: Int, policy: TrackerPolicy = .standard) -> Bool {
        let (dx, dy) = motion
        let speed = policy.leavingSpeed
        let touch = policy.edgeTouch
        if abs(dx) >= speed && abs(dx) > abs(dy) { return dx < 0 ? box.x <= touch : box.x + box.width >= Double(width) - touch }
        if abs(dy) >= speed && abs(dy) > abs(dx) { return dy < 0 ? box.y <= touch : box.y + box.height >= Double(height) - touch }
        return false
    }

    /// Whether it was lost and is looked for no longer: it ends.
    var hasGone: Bool { !isFound && !coasting && lostFrames > 0 }

    private mutating func find(
        in gray: PixelBuffer, margin: Double, minCorrelation: Double, rescaling: Bool, policy: TrackerPolicy
    ) -> Bool {
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
        let least = policy.inViewShare
        guard Double(cw) >= least * Double(patchWidth), Double(ch) >= least * Double(patchHeight), cw >= policy.smallestPatch,
            ch >= policy.smallestPatch
        else {
            isFound = false
            return false
        }
        let cropped = cw != patchWidth || ch != patchHeight
        var found: (match: fkcv_match, growth: Double, sw: Int, sh: Int)? = nil
        var message = [CChar](repeating: 0, count: 128)
        for growth in [1] + (rescaling && !cropped ? policy.growths : []) {
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
