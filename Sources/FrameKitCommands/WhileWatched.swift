import FrameKit

/// Runs a processor only while someone watches (`framekit preview`'s face detection): with no
/// viewer the frames pass untouched, and a preview left running in the background costs what
/// capture costs, not a detector's passes. The faces it would find are drawn for viewers only.
struct WhileWatched: Processor {
    let processor: any Processor
    /// Whether anyone watches now; asked once a frame.
    let isWatched: @Sendable () -> Bool

    var name: String { processor.name }

    func process(_ frame: inout SampleBuffer) throws {
        guard isWatched() else { return }
        try processor.process(&frame)
    }
}
