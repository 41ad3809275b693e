/// An axis-aligned rectangle in pixel coordinates (origin top-left).
public struct Rect: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var area: Int { max(0, width) * max(0, height) }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var center: (x: Double, y: Double) { (Double(x) + Double(width) / 2, Double(y) + Double(height) / 2) }

    public func intersection(_ other: Rect) -> Rect {
        let x0 = max(x, other.x)
        let y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX)
        let y1 = min(maxY, other.maxY)
        return Rect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// Intersection over union, 0…1.
    public func iou(_ other: Rect) -> Double {
        let i = intersection(other).area
        let u = area + other.area - i
        return u == 0 ? 0 : Double(i) / Double(u)
    }

    /// The rectangle scaled by `factor` about the origin, rounded to whole pixels.
    public func scaled(by factor: Double) -> Rect {
        Rect(
            x: Int(saturating: (Double(x) * factor).rounded()), y: Int(saturating: (Double(y) * factor).rounded()),
            width: Int(saturating: (Double(width) * factor).rounded()), height: Int(saturating: (Double(height) * factor).rounded()))
    }

    /// The part of the rectangle inside a `width` x `height` image.
    public func clamped(width w: Int, height h: Int) -> Rect { intersection(Rect(x: 0, y: 0, width: w, height: h)) }

    public var description: String { "(\(x),\(y) \(width)x\(height))" }
}

/// A point in pixel coordinates (sub-pixel: landmarks are not whole pixels).
public struct Point: Sendable, Hashable, Codable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }
    public var description: String { "(\(x),\(y))" }
}

/// A face found in a frame.
public struct Face: Sendable, Hashable, Codable {
    /// Where the face is, in the pixel coordinates of the frame it was found in.
    public var bounds: Rect
    /// The detector's confidence, 0…1 (nil for detectors that give none, such as Haar cascades).
    public var confidence: Double?
    /// Five landmarks where the model gives them (CenterFace: right eye, left eye, nose tip,
    /// right and left mouth corner, as seen by the subject), else empty.
    public var landmarks: [Point]

    public init(bounds: Rect, confidence: Double? = nil, landmarks: [Point] = []) {
        self.bounds = bounds
        self.confidence = confidence
        self.landmarks = landmarks
    }

    /// The same face seen through a change of coordinates: `x' = x * scaleX + dx`, likewise y.
    public func mapped(scaleX: Double, scaleY: Double, dx: Double, dy: Double) -> Face {
        mapped(by: PointMap(a: scaleX, b: 0, c: 0, d: scaleY, tx: dx, ty: dy))
    }
}
