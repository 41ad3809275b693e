import Synchronization

/// Frame accounting of one output: every captured frame is delivered, dropped (with a reason)
/// or, for a moment, pending. `captured == delivered + dropped + pending` at all times.
public struct OutputCounts: Sendable, Equatable, Codable {
    public var captured: Int = 0
    public var delivered: Int = 0
    public var pending: Int = 0
    public var dropped: [DropReason: Int] = [:]

    public init() {}

    public var droppedTotal: Int { dropped.values.reduce(0, +) }
    public func dropped(_ reason: DropReason) -> Int { dropped[reason] ?? 0 }
    /// The guarantee FrameKit makes, checkable at any instant.
    public var isBalanced: Bool { captured == delivered + droppedTotal + pending }
}
