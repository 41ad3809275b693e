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
    /// When the capture pipeline took the frame from its source (dequeue): the start of
    /// FrameKit's own delivery overhead.
    public var dequeueInstant: Timestamp
    /// Faces found by a face-detection stage in the chain (the CNN `FaceDetector`, a
    /// `HaarFaceDetector`, or a `FaceTracker`), in this buffer's pixel coordinates.
    public var faces: [Face]
    /// How long each processor of the chain took on this frame, in chain order.
    public var stageDurations: StageDurations

    public init(
        pixelBuffer: PixelBuffer, presentationTime: Double, sequenceNumber: UInt64,
        captureInstant: Timestamp, faces: [Face] = [], stageDurations: StageDurations = StageDurations()
    ) {
        self.pixelBuffer = pixelBuffer
        self.presentationTime = presentationTime
        self.sequenceNumber = sequenceNumber
        self.captureInstant = captureInstant
        self.dequeueInstant = captureInstant
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

/// Per-stage durations of one frame, held inline for up to eight stages so that timing a
/// chain allocates nothing per frame (longer chains spill into an array).
public struct StageDurations: Sendable, RandomAccessCollection {
    private var inline:
        (
            StageDuration?, StageDuration?, StageDuration?, StageDuration?,
            StageDuration?, StageDuration?, StageDuration?, StageDuration?
        ) = (nil, nil, nil, nil, nil, nil, nil, nil)
    private var spill: [StageDuration] = []
    public private(set) var count = 0

    public init() {}

    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    public subscript(index: Int) -> StageDuration {
        precondition(index >= 0 && index < count, "stage index out of range")
        switch index {
        case 0: return inline.0!
        case 1: return inline.1!
        case 2: return inline.2!
        case 3: return inline.3!
        case 4: return inline.4!
        case 5: return inline.5!
        case 6: return inline.6!
        case 7: return inline.7!
        default: return spill[index - 8]
        }
    }

    public mutating func append(_ timing: StageDuration) {
        switch count {
        case 0: inline.0 = timing
        case 1: inline.1 = timing
        case 2: inline.2 = timing
        case 3: inline.3 = timing
        case 4: inline.4 = timing
        case 5: inline.5 = timing
        case 6: inline.6 = timing
        case 7: inline.7 = timing
        default: spill.append(timing)
        }
        count += 1
    }

    /// Total seconds across stages.
    public var totalSeconds: Double { reduce(0) { $0 + $1.seconds } }
}
