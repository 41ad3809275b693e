import FrameCapture

/// A source's events waiting to be handed on, first in first out, each taken in O(1): a jump in
/// the timestamps queues up to `MediaSource.maximumGapDrops` drops at once, and taking them
/// from the front of an array one by one cost O(n) each (300 jumps of 10,000 drops: 113 s of a
/// core).
package struct EventQueue {
    private var events: [SourceEvent] = []
    private var head = 0

    package init() {}

    package var isEmpty: Bool { head == events.count }

    package mutating func append(_ event: SourceEvent) { events.append(event) }

    /// The oldest event (the queue must not be empty).
    package mutating func removeFirst() -> SourceEvent {
        let event = events[head]
        head += 1
        if head == events.count {
            events.removeAll(keepingCapacity: events.count <= 1024)
            head = 0
        }
        return event
    }

    package mutating func removeAll() {
        events = []
        head = 0
    }
}
