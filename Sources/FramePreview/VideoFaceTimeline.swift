import FrameCore
import FrameStats
import Synchronization

/// The faces of the H.264 stream's recent frames, by each frame's time on the stream's timeline
/// — what the page draws over the frame it shows (`/faces.json`), so a box is drawn on the
/// frame it was found in, not on whatever frame is newest when the result arrives. Each entry
/// carries the frame's capture time (wall-clock milliseconds modulo 2³², as
/// `CaptureTimeStamp` stamps it), so a page can check the pairing against a stamped picture.
final class VideoFaceTimeline: Sendable {
    struct Entry: Sendable, Equatable {
        /// Seconds on the stream's timeline (the frame's presentation time in the MP4).
        let time: Double
        let capture: UInt32
        let faces: [Rect]
    }

    let capacity: Int
    private let entries = Mutex<[Entry]>([])

    init(capacity: Int = 150) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    func publish(_ entry: Entry) {
        entries.withLock { e in
            e.append(entry)
            if e.count > capacity { e.removeFirst(e.count - capacity) }
        }
    }

    /// A new stream: its timeline starts again.
    func reset() { entries.withLock { $0.removeAll() } }

    /// The entries after `time` (all of them for nil, or when the timeline restarted below
    /// it), oldest first.
    func entries(after time: Double?) -> [Entry] {
        let all = entries.withLock { $0 }
        guard let time, let newest = all.last, newest.time >= time else { return all }
        return all.filter { $0.time > time }
    }

    /// The newest entry's time (nil: none yet).
    var newest: Double? { entries.withLock { $0.last?.time } }

    /// `{"frames": [{"t": …, "c": …, "faces": [[x, y, w, h], …]}, …]}`: ``entries(after:)``.
    func json(after time: Double?) -> String {
        JSON.object([("frames", .array(entries(after: time).map(Self.json)))]).text
    }

    /// One entry as JSON: `{"t": …, "c": …, "faces": [[x, y, w, h], …]}`.
    static func json(_ e: Entry) -> JSON {
        .object([
            ("t", .number(e.time, decimals: 6)), ("c", .int(Int(e.capture))),
            ("faces", .array(e.faces.map { .array([.int($0.x), .int($0.y), .int($0.width), .int($0.height)]) }))
        ])
    }
}
