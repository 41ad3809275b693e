import FrameCore

/// A pass's closer looks: each weak box of a tile's pass (below the detector's threshold, down
/// to the confirmation threshold) too small for the tile's scale to be trusted (under
/// ``TrackerPolicy/trustedSide`` at the network) is looked at again, its surroundings enlarged twice
/// as much as the tile's (a 64 px square at the tile's scale, a 128x128 network at 720p, ~1 ms);
/// a face that look finds on the box joins the tile's faces, unless it touches the frame's edge
/// (a box on clutter cut by the frame's bottom edge scored 0.59 so enlarged, on an H.264 copy
/// of report `moving-1080p`: precision 1.000 → 0.926; the rule cost no face on the report
/// split, tune `crowd-sweep` 0.987 → 0.984). Faces of 15–17 px in a real group photo scored
/// 0.13–0.40 at 1:1 and 0.49–0.80 at 1.5x. Weak boxes on faces already tracked
/// are looked at too: skipping them lost report `crowd-sweep` 0.977 → 0.928 (a small face the
/// tile saw only weakly was judged missed by it and dropped).
///
/// On the background schedule a whole-frame pass's weak boxes too small for its scale get closer
/// looks too (``frameScale``): the same 128x128 network, the box's face at twice the trusted
/// side (at most twice the tiles' scale), and only a confident face is taken
/// (``TrackerPolicy/wholeFrameCloserFloor``). A new scene's small faces then come with its first whole-frame pass,
/// not after the tiles' sweep: the whole-frame pass scored 37 of 41 faces under 32 px where the
/// scenes of report `cuts-101`…`103` start 0.03–0.42, and the tiles' first faces reached the
/// frame path two frames later.
struct CloserLooks {
    /// The tiles' scale (``TilePlan/tileScale``).
    var tileScale: Double
    /// The whole-frame pass's scale, where its weak boxes are looked at closer too (nil: only
    /// tiles' are).
    var frameScale: Double? = nil
    /// How many looks a pass takes, the floor of a whole-frame pass's, the trusted side.
    var policy: TrackerPolicy = .standard

    /// The pass over `region` (a tile, or the whole frame: nil) with the faces its closer looks
    /// found.
    func pass(_ detector: any FaceDetecting, on image: PixelBuffer, region: Rect?, candidatesDownTo floor: Double)
        throws(FaceDetectorError) -> DetectionPass
    {
        var pass = try detector.pass(in: image, region: region, candidatesDownTo: floor)
        guard let passScale = region == nil ? frameScale : tileScale else { return pass }
        let least = region == nil ? policy.wholeFrameCloserFloor : 0
        let weak = pass.candidates.filter { Double(max($0.bounds.width, $0.bounds.height)) * passScale < policy.trustedSide }
        for box in weak.sorted(by: { ($0.confidence ?? 0) > ($1.confidence ?? 0) }).prefix(policy.closerLooksPerPass) {
            // The box's face at twice the trusted side at the network, at most twice the tiles'
            // scale, in a square about twice its side: a 128x128 network whatever the box.
            let boxSide = Double(max(box.bounds.width, box.bounds.height))
            let scale = min(policy.closerZoom * tileScale, policy.closerZoom * policy.trustedSide / boxSide)
            let side = Int((2 * policy.closerZoom * policy.trustedSide / scale).rounded()) // image px, twice the face
            guard side <= image.width, side <= image.height else { continue }
            let cx = box.bounds.x + box.bounds.width / 2
            let cy = box.bounds.y + box.bounds.height / 2
            let around = Rect(
                x: max(0, min(image.width - side, cx - side / 2)), y: max(0, min(image.height - side, cy - side / 2)), width: side,
                height: side)
            let closer = try detector.pass(in: image, region: around, scale: scale, candidatesDownTo: floor)
            guard let face = closer.faces.max(by: { $0.bounds.iou(box.bounds) < $1.bounds.iou(box.bounds) }),
                face.bounds.iou(box.bounds) >= policy.closerMatchOverlap, (face.confidence ?? 1) >= least,
                !pass.faces.contains(where: { $0.bounds.iou(face.bounds) > policy.closerMatchOverlap }),
                face.bounds.x > 0, face.bounds.y > 0, face.bounds.maxX < image.width, face.bounds.maxY < image.height
            else { continue }
            pass.faces.append(face)
            pass.candidates.removeAll { $0 == box }
        }
        return pass
    }
}
