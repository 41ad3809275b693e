/// Why a frame was not delivered.
// CodingKeyRepresentable: a `[DropReason: Int]` encodes as an object keyed by the reason's
// name (as the stats JSON names them), not as Codable's [key, value, …] array.
public enum DropReason: String, Sendable, CaseIterable, Codable, CodingKeyRepresentable {
    /// The consumer was still busy with an earlier frame; a newer one replaced this one.
    case frameWasLate = "frame_was_late"
    /// Every buffer was held by the consumer, so there was nowhere to put the frame.
    case outOfBuffers = "out_of_buffers"
    /// Frames were lost upstream (a gap in the driver's sequence numbers).
    case discontinuity
    /// The frame's data was damaged (V4L2 error flag, undecodable or truncated JPEG/file data).
    case corrupt
    /// The camera was switched to a photo's larger format and back (a full-size still while
    /// video runs at a smaller preset): the frames it could not capture meanwhile.
    case photoCapture = "photo_capture"
    /// The output's conversion or one of its processors threw (a detector whose network failed,
    /// a stage given a format it does not take): the frame is not delivered, and the error's
    /// description is in ``DroppedFrame/failure``. Damaged data is ``corrupt``, not this.
    case processingFailed = "processing_failed"
}

/// What a delegate learns about a frame that was dropped: when and why (no pixels).
public struct DroppedFrame: Sendable, Equatable {
    public var sequenceNumber: UInt64
    public var presentationTime: Double
    public var reason: DropReason
    /// For ``DropReason/processingFailed``: what the failing stage threw, as its description
    /// (nil for other reasons).
    public var failure: String?
    public init(sequenceNumber: UInt64, presentationTime: Double, reason: DropReason, failure: String? = nil) {
        self.sequenceNumber = sequenceNumber
        self.presentationTime = presentationTime
        self.reason = reason
        self.failure = failure
    }
}

/// Frame accounting of one output: every captured frame is delivered, dropped (with a reason)
/// or, for a moment, pending. `captured == delivered + dropped + pending` at all times.
public struct OutputCounts: Sendable, Equatable, Codable {
    public var captured: Int = 0
    public var delivered: Int = 0
    public var pending: Int = 0
    public var dropped: [DropReason: Int] = [:]

    public init() {}

    /// The drops of every reason (saturating: counts decoded from a file, or set by a program,
    /// may be anything).
    public var droppedTotal: Int { dropped.values.reduce(0) { $0.saturatingAdd($1) } }
    public func dropped(_ reason: DropReason) -> Int { dropped[reason] ?? 0 }
    /// The guarantee FrameKit makes, checkable at any instant.
    public var isBalanced: Bool {
        let (sum, overflowA) = delivered.addingReportingOverflow(droppedTotal)
        let (total, overflowB) = sum.addingReportingOverflow(pending)
        return !overflowA && !overflowB && captured == total
    }
}
