import FrameCore

/// A box in sub-pixel image coordinates.
package struct Box: Equatable {
    package var x, y, width, height: Double
    package init(x: Double, y: Double, width: Double, height: Double) {
        (self.x, self.y, self.width, self.height) = (x, y, width, height)
    }
    package init(_ r: Rect) { self.init(x: Double(r.x), y: Double(r.y), width: Double(r.width), height: Double(r.height)) }
    var rect: Rect {
        Rect(
            x: Int(saturating: x.rounded()), y: Int(saturating: y.rounded()), width: Int(saturating: width.rounded()),
            height: Int(saturating: height.rounded()))
    }
    func moved(_ dx: Double, _ dy: Double) -> Box { Box(x: x + dx, y: y + dy, width: width, height: height) }
    func overlaps(_ other: Box) -> Bool {
        x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
    }
}
