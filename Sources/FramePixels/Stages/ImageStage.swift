import FrameCore

// Chain stages over the pixel kernels. Each keeps its output buffer between frames (ScratchBuffer);
// stages that need gray take the frame's luma first (free for NV12/I420: it is plane 0).

/// A stage that writes a new image from the frame's pixels into a reused buffer.
package protocol ImageStage: GeometricProcessor {
    var scratch: ScratchBuffer { get }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat)
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError)
}

extension ImageStage {
    public func process(_ frame: inout SampleBuffer) throws {
        let shape = try outputShape(for: frame.pixelBuffer)
        var output = try scratch.take(width: shape.width, height: shape.height, format: shape.format)
        try render(frame.pixelBuffer, into: &output)
        scratch.keep(output)
        // Faces found before this stage stay on the faces: in the new buffer's coordinates.
        let map = pointMap(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
        if map != .identity { frame.faces = frame.faces.map { $0.mapped(by: map) } }
        frame.pixelBuffer = output
    }

    /// Pixel positions do not move (conversions, filters); geometric stages say how they do.
    public func pointMap(width: Int, height: Int) -> PointMap { .identity }
}
