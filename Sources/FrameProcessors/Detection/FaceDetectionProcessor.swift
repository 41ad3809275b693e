import FrameCore

/// Face detection as a chain stage: the faces travel with the frame (`frame.faces`).
public struct FaceDetectionProcessor: Processor {
    public let detector: any FaceDetecting
    /// Each frame searched at its own resolution (`FaceDetector.detectAtFullResolution(in:)`,
    /// for still pictures) rather than shrunk to the network's input; a detector other than
    /// ``FaceDetector`` searches as it always does.
    public let fullResolution: Bool
    public var name: String { "detect" }
    public init(detector: any FaceDetecting, fullResolution: Bool = false) {
        self.detector = detector
        self.fullResolution = fullResolution
    }
    public func process(_ frame: inout SampleBuffer) throws {
        if fullResolution, let cnn = detector as? FaceDetector {
            frame.faces = try cnn.detectAtFullResolution(in: frame.pixelBuffer)
        } else {
            frame.faces = try detector.detect(in: frame.pixelBuffer)
        }
    }
}
