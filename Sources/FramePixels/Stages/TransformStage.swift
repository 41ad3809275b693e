import FrameCore

/// Rotation by quarter turns and mirroring (what a capture connection applies).
public struct TransformStage: ImageStage {
    public let rotation: Transform.Rotation, mirrored: Bool
    package let scratch = ScratchBuffer()
    public var name: String { "transform" }
    public init(rotation: Transform.Rotation, mirrored: Bool = false) {
        self.rotation = rotation
        self.mirrored = mirrored
    }
    package func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        try Transform.requireSupport(input.format, rotation: rotation) // before a buffer of that shape is made
        let size = Transform.size(width: input.width, height: input.height, rotation: rotation)
        return (size.width, size.height, input.format)
    }
    public func pointMap(width: Int, height: Int) -> PointMap {
        Transform.pointMap(width: width, height: height, rotation: rotation, mirrored: mirrored)
    }
    package func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        try Transform.apply(input, rotation: rotation, mirrored: mirrored, into: &output)
    }
}
