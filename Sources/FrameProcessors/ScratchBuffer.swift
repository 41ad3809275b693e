import FrameCore
import Synchronization

/// A stage's output buffer, reused frame after frame: no allocation per frame once the
/// consumer lets go of the previous frame (if it has not, copy-on-write makes a fresh buffer
/// rather than overwrite what it holds).
final class ScratchBuffer: Sendable {
    private let slot = Mutex<PixelBuffer?>(nil)

    /// Moves the kept buffer out if it has this shape (so this stage's own reference does not
    /// force a copy), else makes a new one.
    func take(width: Int, height: Int, format: PixelFormat) throws(PixelBufferError) -> PixelBuffer {
        let kept = slot.withLock { s -> PixelBuffer? in
            defer { s = nil }
            return s
        }
        if let kept, kept.width == width, kept.height == height, kept.format == format { return kept }
        return try PixelBuffer(width: width, height: height, format: format)
    }

    func keep(_ buffer: PixelBuffer) { slot.withLock { $0 = buffer } }
}

/// A stage that writes a new image from the frame's pixels into a reused buffer.
protocol ImageStage: GeometricProcessor {
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
