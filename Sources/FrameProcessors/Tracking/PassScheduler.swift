import Dispatch

/// Where a ``FaceTracker``'s background passes run, shared by every tracker given the same
/// scheduler: at most `lanes` passes at once, in the order they were asked for. Each tracker has
/// at most one pass queued or running, so that order is round robin between them: with four
/// cameras each one's turn comes after the others', and the CPU runs `lanes` networks, not four
/// fighting for the same cores (each pass slower, every camera's faces later, the frame path
/// starved). A tracker made without one has its own (one lane).
///
/// ```swift
/// let scheduler = PassScheduler(lanes: 2)
/// let trackers = try detectors.map { try FaceTracker(detector: $0, options: .init(schedule: .background), scheduler: scheduler) }
/// ```
public final class PassScheduler: Sendable {
    public let lanes: Int
    private let queue: DispatchQueue
    private let free: DispatchSemaphore

    /// - Parameter lanes: passes run at once (at least 1). One network already uses two threads
    ///   (OpenCV's), but not two whole cores: on a 2-core machine two lanes ran more passes a
    ///   second than one (docs/performance.md).
    public init(lanes: Int = 1) {
        self.lanes = max(1, lanes)
        queue = DispatchQueue(label: "framekit.face-tracker.passes", qos: .userInitiated, attributes: self.lanes > 1 ? .concurrent : [])
        free = DispatchSemaphore(value: self.lanes)
    }

    /// Runs `pass` when a lane is free (FIFO).
    func run(_ pass: @escaping @Sendable () -> Void) {
        queue.async { [free] in
            free.wait()
            defer { free.signal() }
            pass()
        }
    }
}
