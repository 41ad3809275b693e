import Synchronization

/// The most recent resize plans (taps, weights, shuffle masks), by axis geometry: a video's
/// frames are resized alike, so a plan is made once rather than per frame — at 720p making it
/// cost as much as the resize's own vectorised passes.
final class ResizePlans<Plan: Sendable>: Sendable {
    struct Key: Hashable, Sendable {
        let source: Int, destination: Int, channels: Int
    }

    /// Most recent first; a handful covers a pipeline's stages (each axis of each resize).
    private let entries = Mutex<[(Key, Plan)]>([])
    private let capacity = 8

    func plan(source: Int, destination: Int, channels: Int = 1, make: () -> Plan) -> Plan {
        let key = Key(source: source, destination: destination, channels: channels)
        if let hit = entries.withLock({ list in list.first { $0.0 == key }?.1 }) { return hit }
        let made = make()
        entries.withLock { list in
            list.removeAll { $0.0 == key }
            list.insert((key, made), at: 0)
            if list.count > capacity { list.removeLast(list.count - capacity) }
        }
        return made
    }
}
