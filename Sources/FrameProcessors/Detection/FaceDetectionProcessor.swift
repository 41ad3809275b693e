import FrameCore

/// Face detection as a chain stage: the faces travel with the frame (`frame.faces`).
public struct FaceDetectionProcessor: Processor {
    public let detector: any FaceDetecting
    public var name: String { "detect" }
    public init(detector: any FaceDetecting) { self.detector = detector }
    public func process(_ frame: inout SampleBuffer) throws {
        frame.faces = try detector.detect(in: frame.pixelBuffer)
    }
}
