/// One step of frame processing: filters the pixels and/or adds findings (faces) to the frame.
public protocol Processor: Sendable {
    /// The stage's name in stats and reports.
    var name: String { get }
    /// Processes one frame in place. Called on one thread at a time per chain.
    func process(_ frame: inout SampleBuffer) throws
}

/// A processor that knows where each pixel position of its input ends up in its output
/// (identity for filters; a scale, crop, turn or mirror for geometric stages). Faces on a frame
/// follow it, and `DerivedImageDetection` maps faces back through it.
public protocol GeometricProcessor: Processor {
    /// Where positions of a `width` x `height` input go.
    func pointMap(width: Int, height: Int) -> PointMap
}

/// Processors run in order on the caller's thread (the output's delegate queue), each timed.
public struct ProcessorChain: Sendable {
    public var processors: [any Processor]

    public init(_ processors: [any Processor] = []) { self.processors = processors }

    /// Runs every processor on `frame`, appending each stage's duration to
    /// `frame.stageDurations`. Stops at the first error.
    public func run(_ frame: inout SampleBuffer) throws {
        for processor in processors {
            let start = Timestamp.now()
            try processor.process(&frame)
            frame.stageDurations.append(StageDuration(stage: processor.name, seconds: Timestamp.now().seconds(since: start)))
        }
    }
}
