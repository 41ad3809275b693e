import Synchronization

/// The H.264 stream's init segment and its last fragments, shared by every viewer: one encode,
/// however many watch. Each viewer keeps a ``Cursor`` and asks ``next(for:)`` what to send: the
/// init segment first (again whenever the stream restarts, at a new size), then fragments in
/// order from a key frame. A viewer that falls behind the ring (a slow link) skips to the next
/// key frame, its skipped fragments counted, rather than being queued for: it can never hold
/// the others or the encoder back. No sockets here: tests drive it directly.
final class VideoFragmentRing: Sendable {
    /// Where one viewer is.
    struct Cursor: Sendable {
        /// The init segment it has (0: none yet).
        var header: UInt64 = 0
        /// The last fragment it was sent (0: none of this stream).
        var sent: UInt64 = 0
        /// Whether it is following the stream (false: waiting for a key frame to start from).
        var following = false
        /// Fragments it never got because it fell behind.
        var skipped = 0
    }

    private struct Fragment {
        let number: UInt64
        let bytes: [UInt8]
        let isKey: Bool
    }

    private struct State {
        var header: [UInt8] = []
        var codec = ""
        var headerNumber: UInt64 = 0
        var fragments: [Fragment] = [] // oldest first, numbered one by one
        var nextNumber: UInt64 = 1
    }

    /// Fragments kept: viewers within this many of the newest never skip.
    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 90) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// The stream's codec string for `Content-Type` (nil before the first init segment).
    var codec: String? { state.withLock { $0.headerNumber == 0 ? nil : $0.codec } }

    /// A new stream (the first, or one at a new size): its init segment; the old fragments go.
    func publish(header: [UInt8], codec: String) {
        state.withLock { s in
            s.header = header
            s.codec = codec
            s.headerNumber += 1
            s.fragments.removeAll()
        }
    }

    /// The next fragment of the current stream.
    func publish(fragment: [UInt8], isKey: Bool) {
        state.withLock { s in
            s.fragments.append(Fragment(number: s.nextNumber, bytes: fragment, isKey: isKey))
            s.nextNumber += 1
            if s.fragments.count > capacity { s.fragments.removeFirst(s.fragments.count - capacity) }
        }
    }

    /// What `cursor`'s viewer is to be sent next (nil: nothing yet), the cursor moved past it.
    func next(for cursor: inout Cursor) -> [UInt8]? {
        state.withLock { s -> [UInt8]? in
            guard s.headerNumber != 0 else { return nil }
            if cursor.header != s.headerNumber {
                cursor = Cursor(header: s.headerNumber, sent: 0, following: false, skipped: cursor.skipped)
                return s.header
            }
            guard let oldest = s.fragments.first?.number else { return nil }
            // Fell behind the ring: what it missed is gone; it goes on from a key frame.
            if cursor.following && cursor.sent + 1 < oldest { cursor.following = false }
            if !cursor.following {
                // The newest key frame it has not had: the least delay for a new viewer, and
                // for one that fell behind the fewest frames shown late.
                guard let key = s.fragments.last(where: { $0.isKey && $0.number > cursor.sent }) else { return nil }
                if cursor.sent > 0 { cursor.skipped += Int(key.number - cursor.sent - 1) }
                cursor.sent = key.number - 1
                cursor.following = true
            }
            let due = cursor.sent + 1
            guard due < s.nextNumber else { return nil }
            cursor.sent = due
            return s.fragments[Int(due - oldest)].bytes
        }
    }
}
