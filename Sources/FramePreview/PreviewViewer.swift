import FrameCore
import Synchronization

/// One client watching a preview stream, as `/stats.json` and `/metrics` report it.
public struct PreviewViewer: Sendable, Equatable {
    public enum Stream: String, Sendable {
        case mjpeg
        case h264
    }

    /// The connection's number (from 1, in order of arrival).
    public let id: Int
    public let stream: Stream
    public let bytesSent: Int
    /// Seconds since it connected.
    public let seconds: Double
    /// Frames it never got: for MJPEG, pictures replaced before it was ready for them; for
    /// H.264, fragments skipped to the next key frame after it fell behind.
    public let skippedFrames: Int

    /// Its average rate since it connected.
    public var bytesPerSecond: Double { seconds > 0 ? Double(bytesSent) / seconds : 0 }
}

/// The viewers connected now, updated by their stream threads.
final class PreviewViewers: Sendable {
    private struct Entry {
        let stream: PreviewViewer.Stream
        let since: Timestamp
        var bytes = 0
        var skipped = 0
    }

    private let state = Mutex((next: 1, entries: [Int: Entry]()))

    /// A viewer of `stream` arrived: its number.
    func arrive(_ stream: PreviewViewer.Stream) -> Int {
        state.withLock { s in
            defer { s.next += 1 }
            s.entries[s.next] = Entry(stream: stream, since: .now())
            return s.next
        }
    }

    func sent(_ bytes: Int, skipped: Int, by id: Int) {
        state.withLock { s in
            s.entries[id]?.bytes += bytes
            s.entries[id]?.skipped = skipped
        }
    }

    func leave(_ id: Int) { _ = state.withLock { $0.entries.removeValue(forKey: id) } }

    func count(of stream: PreviewViewer.Stream) -> Int { state.withLock { s in s.entries.values.filter { $0.stream == stream }.count } }

    var all: [PreviewViewer] {
        let now = Timestamp.now()
        return state.withLock { s in
            s.entries.sorted { $0.key < $1.key }.map { id, e in
                PreviewViewer(id: id, stream: e.stream, bytesSent: e.bytes, seconds: now.seconds(since: e.since), skippedFrames: e.skipped)
            }
        }
    }
}
