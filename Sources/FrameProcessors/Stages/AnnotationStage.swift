import FrameCore
import FramePixels

/// Draws the frame's faces on it (after a ``FaceDetectionProcessor``).
public struct AnnotationStage: Processor {
    public let thickness: Int
    public var name: String { "annotate" }
    public init(thickness: Int = 3) { self.thickness = thickness }
    public func process(_ frame: inout SampleBuffer) throws {
        Annotation.drawBoxes(frame.faces.map(\.bounds), on: &frame.pixelBuffer, thickness: thickness)
    }
}
