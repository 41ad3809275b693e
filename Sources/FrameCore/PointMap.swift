/// An affine map of pixel coordinates, `x' = a·x + b·y + tx`, `y' = c·x + d·y + ty`: what a
/// geometric stage (resize, crop, rotate, mirror) does to the positions in a frame, so faces
/// found before or after it can be carried across.
public struct PointMap: Sendable, Equatable {
    public var a, b, c, d, tx, ty: Double

    public init(a: Double, b: Double, c: Double, d: Double, tx: Double, ty: Double) {
        (self.a, self.b, self.c, self.d, self.tx, self.ty) = (a, b, c, d, tx, ty)
    }

    public static let identity = PointMap(a: 1, b: 0, c: 0, d: 1, tx: 0, ty: 0)

    public static func scale(_ sx: Double, _ sy: Double) -> PointMap { PointMap(a: sx, b: 0, c: 0, d: sy, tx: 0, ty: 0) }
    public static func translation(_ dx: Double, _ dy: Double) -> PointMap { PointMap(a: 1, b: 0, c: 0, d: 1, tx: dx, ty: dy) }

    public func apply(_ p: Point) -> Point {
        Point(x: a * p.x + b * p.y + tx, y: c * p.x + d * p.y + ty)
    }

    /// This map, then `next`.
    public func then(_ next: PointMap) -> PointMap {
        PointMap(
            a: next.a * a + next.b * c, b: next.a * b + next.b * d,
            c: next.c * a + next.d * c, d: next.c * b + next.d * d,
            tx: next.a * tx + next.b * ty + next.tx, ty: next.c * tx + next.d * ty + next.ty)
    }

    /// The map back (nil when the map flattens the plane, which no stage does).
    public var inverse: PointMap? {
        let det = a * d - b * c
        guard det != 0, det.isFinite else { return nil }
        let ia = d / det
        let ib = -b / det
        let ic = -c / det
        let id = a / det
        return PointMap(a: ia, b: ib, c: ic, d: id, tx: -(ia * tx + ib * ty), ty: -(ic * tx + id * ty))
    }
}

extension Face {
    /// The face seen through `map`: landmarks mapped, the box the one around its mapped corners.
    public func mapped(by map: PointMap) -> Face {
        let corners = [
            Point(x: Double(bounds.x), y: Double(bounds.y)), Point(x: Double(bounds.maxX), y: Double(bounds.y)),
            Point(x: Double(bounds.x), y: Double(bounds.maxY)), Point(x: Double(bounds.maxX), y: Double(bounds.maxY))
        ]
        .map(map.apply)
        let x0 = corners.map(\.x).min()!
        let x1 = corners.map(\.x).max()!
        let y0 = corners.map(\.y).min()!
        let y1 = corners.map(\.y).max()!
        return Face(
            bounds: Rect(
                x: Int(saturating: x0.rounded()), y: Int(saturating: y0.rounded()), width: Int(saturating: (x1 - x0).rounded()),
                height: Int(saturating: (y1 - y0).rounded())),
            confidence: confidence, landmarks: landmarks.map(map.apply))
    }
}
