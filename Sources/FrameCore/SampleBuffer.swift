/// One video frame as it travels from a capture source through the processor chain to its
/// consumer: the pixels, when it was captured, where it sits in its source, and what the
/// processors found in it.
public struct SampleBuffer: Sendable {
    public var pixelBuffer: PixelBuffer
    /// The frame's time on its source's timeline: the driver's timestamp for a camera, the
    /// frame's index times the frame duration for a file.
    public var presentationTime: Double
    /// 0-based index of the frame in its source. Dropped frames leave gaps.
    public var sequenceNumber: UInt64
    /// When the frame came into being on the monotonic clock (the kernel's buffer timestamp,
    /// the virtual camera's tick, the moment a file frame was read): latency is measured from here.
    public var captureInstant: Timestamp
    /// Faces found by a ``FaceDetector`` in the chain, in this buffer's pixel coordinates.
    public var faces: [Face]
    /// How long each processor of the chain took on this frame, in chain order.
    public var stageDurations: [StageDuration]

    public init(pixelBuffer: PixelBuffer, presentationTime: Double, sequenceNumber: UInt64,
                captureInstant: Timestamp, faces: [Face] = [], stageDurations: [StageDuration] = []) {
        self.pixelBuffer = pixelBuffer
        self.presentationTime = presentationTime
        self.sequenceNumber = sequenceNumber
        self.captureInstant = captureInstant
        self.faces = faces
        self.stageDurations = stageDurations
    }
}

/// The time one named processing stage took on one frame.
public struct StageDuration: Sendable, Equatable {
    public var stage: String
    public var seconds: Double
    public init(stage: String, seconds: Double) {
        self.stage = stage
        self.seconds = seconds
    }
}
