import FrameCore

/// Keeps only `region` of each frame (zero copy). Faces already on the frame move into the
/// crop's coordinates (cut to it; those wholly outside are dropped).
public struct CropStage: GeometricProcessor {
    public let region: Rect
    public var name: String { "crop" }
    public init(_ region: Rect) { self.region = region }
    public func process(_ frame: inout SampleBuffer) throws {
        let cropped = try frame.pixelBuffer.cropped(to: region)
        let map = pointMap(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
        frame.faces = frame.faces.compactMap { face in
            var moved = face.mapped(by: map)
            moved.bounds = moved.bounds.clamped(width: region.width, height: region.height)
            return moved.bounds.area > 0 ? moved : nil
        }
        frame.pixelBuffer = cropped
    }
    public func pointMap(width: Int, height: Int) -> PointMap { .translation(-Double(region.x), -Double(region.y)) }
}
