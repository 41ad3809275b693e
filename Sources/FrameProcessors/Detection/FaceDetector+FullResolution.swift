import FrameCore

extension FaceDetector {
    /// Faces in `image` at its own resolution, whatever its size: for still pictures, where a
    /// face of 20 px in a 4000 px photo matters and a few passes' time does not. A whole-image
    /// pass (the image shrunk to ``Options/inputSize``) finds the large faces; below it, the
    /// image at its own scale (and where needed half of it, a quarter…) is covered by
    /// overlapping tiles the network sees at that scale. Memory stays that of one
    /// ``Options/inputSize`` network whatever the image.
    ///
    /// A level at scale `s` finds faces from `smallestFace` / `s` up; the faces it must hold
    /// whole in some tile are those the next coarser search misses (below `smallestFace` over
    /// its scale, with a quarter's margin), so the tiles overlap by that much. That next search
    /// is the whole-image pass when such an overlap fits in a quarter tile, else a level at half
    /// the scale. A face that touches a tile's edge inside the image is left to the neighbour
    /// that holds it whole, and faces found twice are suppressed as in any pass.
    public func detectAtFullResolution(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        let side = Double(options.inputSize)
        let whole = passScale(width: image.width, height: image.height)
        var looks = [Look(region: Rect(x: 0, y: 0, width: image.width, height: image.height), scale: whole, faces: try detect(in: image))]
        var scale = 1.0
        while scale > whole {
            // The overlap, in image pixels, for the whole pass next; else for half this scale.
            let toWhole = 1.25 * Self.smallestFace / whole
            let next = toWhole * scale <= side / 4 ? whole : scale / 2
            let overlap = Int((1.25 * Self.smallestFace / next).rounded(.up))
            let tile = Int((side / scale).rounded())
            for y in Self.tileStarts(length: image.height, tile: tile, step: tile - overlap) {
                for x in Self.tileStarts(length: image.width, tile: tile, step: tile - overlap) {
                    let region = Rect(x: x, y: y, width: min(tile, image.width - x), height: min(tile, image.height - y))
                    looks.append(Look(region: region, scale: scale, faces: try detect(in: image, region: region)))
                }
            }
            scale = next
        }
        let faces = Self.merge(looks, width: image.width, height: image.height, sameFace: options.overlapThreshold)
        return suppressOverlaps(faces, threshold: options.overlapThreshold)
    }

    /// One network pass of ``detectAtFullResolution(in:)``: its region, the scale the network
    /// saw it at, and what it found there.
    struct Look {
        var region: Rect
        var scale: Double
        var faces: [Face]
    }

    /// The faces of every look that stand:
    /// - a face touching an edge of its look's region inside the image (within two of the
    ///   network's pixels) is cut there: the neighbour that holds it whole reports it;
    /// - a face that a look at a finer scale held whole (and at most half that look's side, well
    ///   inside what the network sees) and did not find is not one: seen too small, the head and
    ///   shoulders around a small face, or a group of them, pass for a larger face. (Found:
    ///   overlapping by `sameFace` IoU, the suppression's own measure.)
    static func merge(_ looks: [Look], width: Int, height: Int, sameFace: Double) -> [Face] {
        var kept: [Face] = []
        for look in looks {
            for face in look.faces {
                let box = face.bounds
                if touchesInnerEdge(box, of: look.region, width: width, height: height, margin: 2 / look.scale) { continue }
                let refuted = looks.contains { finer in
                    finer.scale > look.scale && 2 * max(box.width, box.height) <= max(finer.region.width, finer.region.height)
                        && finer.region.intersection(box) == box && !finer.faces.contains { $0.bounds.iou(box) >= sameFace }
                }
                if !refuted { kept.append(face) }
            }
        }
        return kept
    }

    /// The smallest face the network finds reliably, in its input's pixels (CenterFace: about
    /// 12; the margin covers faces turned or blurred).
    static let smallestFace = 16.0

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
