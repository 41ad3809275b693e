import FrameCore

extension FaceDetector {
    /// Faces in `image` at its own resolution, whatever its size: for still pictures, where a
    /// face of 20 px in a 4000 px photo matters and a few passes' time does not. A whole-image
    /// pass (the image shrunk to ``Options/inputSize``) finds the large faces; below it, the
    /// image at its own scale (and where needed half of it, a quarter…) is covered by
    /// overlapping tiles the network sees at that scale, all of one size: the tiles need one
    /// network whatever the image's size (`levels(width:height:inputSize:)`).
    ///
    /// A face that touches a tile's edge inside the image is left to the neighbour that holds
    /// it whole; a box from a coarser look is dropped where a finer tile held it whole with room
    /// around it and saw nothing there, not even a weak box (`merge(_:width:height:sameFace:)`);
    /// faces found twice are suppressed as in any pass. An ``Options/inputSize`` too small for
    /// tiles to hold what the coarser search misses (under 160) gets the whole-image pass only.
    public func detectAtFullResolution(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        let whole = Rect(x: 0, y: 0, width: image.width, height: image.height)
        var looks = [
            Look(
                region: whole, scale: passScale(width: image.width, height: image.height), pass: DetectionPass(faces: try detect(in: image))
            )
        ]
        for level in Self.levels(width: image.width, height: image.height, inputSize: options.inputSize) {
            for y in Self.tileStarts(length: image.height, tile: level.tile, step: level.tile - level.overlap) {
                for x in Self.tileStarts(length: image.width, tile: level.tile, step: level.tile - level.overlap) {
                    let region = Rect(x: x, y: y, width: min(level.tile, image.width - x), height: min(level.tile, image.height - y))
                    let pass = try pass(in: image, region: region, candidatesDownTo: Self.refutationFloor)
                    looks.append(Look(region: region, scale: level.scale, pass: pass))
                }
            }
        }
        let faces = Self.merge(looks, width: image.width, height: image.height, sameFace: options.overlapThreshold)
        return suppressOverlaps(faces, threshold: options.overlapThreshold)
    }

    /// The tiled levels for a `width` x `height` image, finest first: each a scale (1, ½, ¼…),
    /// its tiles' side and their overlap in image pixels. A level at scale `s` finds faces from
    /// `smallestFace` / `s` up; its tiles overlap by what the next coarser search misses (below
    /// `smallestFace` over that search's scale, and a quarter more), so every such face lies
    /// whole in some tile. The next search is the whole-image pass where that overlap fits in a
    /// quarter tile, else a level at half the scale. None where the image fits the input, or
    /// where an overlap would be more than a quarter tile (an input under 160: too small to tile).
    static func levels(width: Int, height: Int, inputSize: Int) -> [(scale: Double, tile: Int, overlap: Int)] {
        let side = Double(inputSize)
        let whole = min(1, side / Double(max(1, width, height)))
        var levels: [(scale: Double, tile: Int, overlap: Int)] = []
        var scale = 1.0
        while scale > whole {
            let next = 1.25 * smallestFace / whole * scale <= side / 4 ? whole : scale / 2
            let overlap = Int((1.25 * smallestFace / next).rounded(.up))
            let tile = Int((side / scale).rounded())
            guard 4 * overlap <= tile else { return levels }
            levels.append((scale, tile, overlap))
            scale = next
        }
        return levels
    }

    /// The smallest face the network finds reliably, in its input's pixels (CenterFace: about
    /// 12; the margin covers faces turned or blurred).
    static let smallestFace = 16.0
    /// A tile's weak boxes, down to this score, still speak for a face a coarser look found
    /// there: only where the tile saw nothing at all is the coarser box dropped.
    static let refutationFloor = 0.1

    /// One network pass of ``detectAtFullResolution(in:)``: its region, the scale the network
    /// saw it at, and what it found there.
    struct Look {
        var region: Rect
        var scale: Double
        var pass: DetectionPass
    }

    /// The faces of every look that stand:
    /// - a face touching an edge of its look's region inside the image (within two of the
    ///   network's pixels) is cut there: the neighbour that holds it whole reports it;
    /// - a face that a look at a finer scale held whole, with a quarter of its side around it
    ///   (context the network needs; and at most half that look's side, well inside what the
    ///   network sees), where that look found no box at all, not even a weak one, is not a
    ///   face: seen too small, the head and shoulders around a small face, or a group of them,
    ///   pass for a larger face. (Found: overlapping by `sameFace` IoU, the suppression's own
    ///   measure.)
    static func merge(_ looks: [Look], width: Int, height: Int, sameFace: Double) -> [Face] {
        var kept: [Face] = []
        for look in looks {
            for face in look.pass.faces {
                let box = face.bounds
                if touchesInnerEdge(box, of: look.region, width: width, height: height, margin: 2 / look.scale) { continue }
                let room = max(box.width, box.height) / 4
                let withRoom = Rect(x: box.x - room, y: box.y - room, width: box.width + 2 * room, height: box.height + 2 * room)
                let refuted = looks.contains { finer in
                    finer.scale > look.scale && 2 * max(box.width, box.height) <= max(finer.region.width, finer.region.height)
                        && finer.region.intersection(withRoom) == withRoom
                        && !(finer.pass.faces + finer.pass.candidates).contains { $0.bounds.iou(box) >= sameFace }
                }
                if !refuted { kept.append(face) }
            }
        }
        return kept
    }

    /// Where tiles of `tile` pixels start along `length`, `step` apart, the last flush with the end.
    static func tileStarts(length: Int, tile: Int, step: Int) -> [Int] {
        guard length > tile else { return [0] }
        var starts = Array(stride(from: 0, to: length - tile, by: max(1, step)))
        starts.append(length - tile)
        return starts
    }

    /// Whether `box` reaches within `margin` of an edge of `region` that is not the image's own.
    static func touchesInnerEdge(_ box: Rect, of region: Rect, width: Int, height: Int, margin: Double) -> Bool {
        let m = Int(margin.rounded(.up))
        return (region.x > 0 && box.x <= region.x + m) || (region.y > 0 && box.y <= region.y + m)
            || (region.maxX < width && box.maxX >= region.maxX - m) || (region.maxY < height && box.maxY >= region.maxY - m)
    }
}
