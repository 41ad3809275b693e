/// Where a tracker looks for faces too small for a pass over the whole frame, which the
/// detector shrinks (CenterFace at 640 px sees a 20 px face of a 720p frame as 10 px, and
/// misses it): tiles of the frame, each shrunk half as much (at most to the frame's own scale),
/// visited in turn between whole-frame passes. Tiles overlap by ``smallFace``, so every face a
/// whole-frame pass cannot be trusted to see lies whole inside one tile.
package struct TilePlan: Equatable {
    package var tiles: [Rect]
    /// Faces whose longest side is at least this (image px) are judged by whole-frame passes:
    /// such a face a pass does not report counts as missed. Smaller faces are judged only by
    /// the tiles that hold them whole.
    package var smallFace: Double
    /// How much a tile is shrunk for its pass (1: not at all; 0: no tiles).
    package var tileScale: Double
    var width: Int
    var height: Int
    let policy: TrackerPolicy

    /// The plan for `width` x `height` frames that a whole-frame pass shrinks by `scale`; no
    /// tiles when it shrinks them little (the pass itself sees small faces:
    /// ``TrackerPolicy/shrinkingScale``).
    package init(width: Int, height: Int, scale: Double, policy: TrackerPolicy = .standard) {
        self.width = width
        self.height = height
        self.policy = policy
        smallFace = scale > 0 ? policy.trustedSide / scale : 0
        tiles = []
        tileScale = 0
        let smallest = policy.smallestTiledFrame
        guard scale > 0, scale < policy.shrinkingScale, width >= smallest, height >= smallest else {
            smallFace = 0
            return
        }
        let tileScale = min(1, policy.tileZoom * scale)
        let longest = scale * Double(max(width, height)) / tileScale // a tile's longest side, image px
        // A face up to `smallFace` lies whole in some tile. (Not always clear of the 2 px margin
        // by which a tile sees it whole: a 60-63 px face across an overlap is seen whole by no
        // tile. An overlap 5 px wider fixed that, changed nothing on the tune split, and cost the
        // report split's `crowd` 0.009 of recall: the layout moved. Left as it was.)
        let overlap = smallFace
        guard longest > 2 * overlap else {
            smallFace = 0
            return
        }
        self.tileScale = tileScale
        func layout(_ extent: Int) -> [(Int, Int)] {
            let count = max(1, Int((Double(extent) - overlap) / (longest - overlap) + 0.999))
            let side = min(extent, Int(((Double(extent) + Double(count - 1) * overlap) / Double(count)).rounded(.up)))
            return (0..<count).map { i in (count == 1 ? 0 : i * (extent - side) / (count - 1), side) }
        }
        for (y, h) in layout(height) {
            for (x, w) in layout(width) { tiles.append(Rect(x: x, y: y, width: w, height: h)) }
        }
    }

    /// Whether a face whose longest side is `side` (image px) is a tile's to deal with (up to
    /// ``TrackerPolicy/tileFaceLimit`` times ``smallFace``).
    func isSmall(_ side: Double) -> Bool { side < policy.tileFaceLimit * smallFace }

    /// The faces a tile's pass deals with: small ones.
    func small(_ faces: [Face]) -> [Face] { faces.filter { isSmall(Double(max($0.bounds.width, $0.bounds.height))) } }

    /// The tiles to look at for `boxes` (small faces lost from view), each once: for every box,
    /// the first tile that sees it whole, else the one holding most of it.
    func tilesHolding(_ boxes: [Box]) -> [Rect] {
        var chosen: [Rect] = []
        for box in boxes {
            guard
                let tile = tiles.first(where: { seesWhole($0, box) })
                    ?? tiles.max(by: { $0.intersection(box.rect).area < $1.intersection(box.rect).area }),
                !chosen.contains(tile)
            else { continue }
            chosen.append(tile)
        }
        return chosen
    }

    /// Whether `box` lies whole inside `tile`.
    package static func holds(_ tile: Rect, _ box: Box) -> Bool {
        box.x >= Double(tile.x) && box.y >= Double(tile.y) && box.x + box.width <= Double(tile.x + tile.width)
            && box.y + box.height <= Double(tile.y + tile.height)
    }

    /// Whether a pass over `tile` sees `box` whole: inside it, and not touching an edge of the
    /// tile inside the frame (a face there is cut: the tile beside it, or a whole-frame pass,
    /// sees it whole).
    package func seesWhole(_ tile: Rect, _ box: Box) -> Bool {
        let margin = policy.innerEdgeMargin
        let (x0, y0) = (Double(tile.x), Double(tile.y))
        let (x1, y1) = (Double(tile.x + tile.width), Double(tile.y + tile.height))
        guard Self.holds(tile, box) else { return false }
        if tile.x > 0 && box.x <= x0 + margin { return false }
        if tile.y > 0 && box.y <= y0 + margin { return false }
        if tile.x + tile.width < width && box.x + box.width >= x1 - margin { return false }
        if tile.y + tile.height < height && box.y + box.height >= y1 - margin { return false }
        return true
    }

    /// The faces of a pass over `tile` that it saw whole (``seesWhole(_:_:)``).
    func whole(_ faces: [Face], in tile: Rect) -> [Face] { faces.filter { seesWhole(tile, Box($0.bounds)) } }
}
