import FrameCore

/// How a live source tells a recording served again from a stream that came back. A stream
/// that ended cleanly (the server closed it: no error, no silence) and, reopened, begins with a
/// frame identical, pixel for pixel, to the first frame the connection before it began with is
/// the same recording from its start: an http response with no length, a server that writes
/// a file to each client. A camera's frames differ after a pause (sensor noise, a clock in
/// the picture), and a stream that broke off with an error is never judged. Nor is one whose
/// first frame and the `framesToSeeMotion` after it are all the same bytes (a still picture
/// served live as MJPEG): a live still and a recording of one cannot be told apart, and ending a live one
/// would be the worse mistake. What it cannot tell: a generator restarted on the same frames
/// (a test pattern, moving or encoded by an inter-frame codec, whose first frames are
/// refined) is taken for a recording. So only sources where a server commonly writes a file
/// to each client are judged (http, https, tcp; not RTSP, whose servers restart their test
/// patterns and whose recordings say their duration).
package struct Replay {
    /// How many frames of a connection may go by before it is taken for a still picture.
    package static let framesToSeeMotion = 30

    package enum Verdict {
        /// The recording's first frame again: the source ends.
        case replayed
        /// The first frame of a connection reopened after a clean end, and not the recording's:
        /// the stream is back (the `interruptionEnded` held back until now is due).
        case cameBack
        /// Any other frame.
        case goesOn
    }

    /// The first frame of the connection under way, once it came.
    private var firstFrame: Fingerprint?
    /// The connection under way: frames after its first looked at, and whether one differed.
    private var framesSeen = 0
    private var moved = false
    /// The first frame of a connection that ended cleanly, while the next is being opened or
    /// gives its first frame.
    private var endedWith: Fingerprint?
    /// The connection reopened after a clean end and has not given a frame yet: `interruptionEnded`
    /// is held back until its first frame is judged.
    package private(set) var awaitingFirstFrame = false

    /// The connection under way gave no frame.
    package var connectionGaveNoFrame: Bool { firstFrame == nil }

    package init() {}

    /// The connection ended cleanly: its first frame is what a replay would begin with (if
    /// its picture moved).
    package mutating func endedCleanly() {
        if let firstFrame, moved { endedWith = firstFrame }
    }

    /// The connection ended (cleanly or not; after `endedCleanly()` when clean). Returns
    /// whether the interruption was already announced and not yet ended (a reopened
    /// connection that failed before its first frame).
    package mutating func connectionEnded() -> Bool {
        let announced = awaitingFirstFrame
        awaitingFirstFrame = false
        if firstFrame == nil, announced { return true } // endedWith stays: still the recording's
        if firstFrame != nil, endedWith != firstFrame { endedWith = nil } // broke off with an error
        firstFrame = nil
        framesSeen = 0
        moved = false
        return announced
    }

    /// A connection was opened again. Returns whether `interruptionEnded` waits for its first frame.
    package mutating func reopened() -> Bool {
        awaitingFirstFrame = endedWith != nil
        return awaitingFirstFrame
    }

    /// A frame decoded into `buffer`: judged if it is its connection's first; one of the next
    /// few is compared with the first until one differs.
    package mutating func judge(_ buffer: PixelBuffer) -> Verdict {
        if let firstFrame {
            if !moved, framesSeen < Self.framesToSeeMotion {
                framesSeen += 1
                moved = Fingerprint(buffer) != firstFrame
            }
            return .goesOn
        }
        let print = Fingerprint(buffer)
        if let endedWith, endedWith == print { return .replayed }
        firstFrame = print
        endedWith = nil
        defer { awaitingFirstFrame = false }
        return awaitingFirstFrame ? .cameBack : .goesOn
    }

    /// A frame's size, format and every visible byte of its planes (row padding left out), hashed.
    package struct Fingerprint: Equatable {
        let width: Int, height: Int, format: PixelFormat
        let hash: Int

        package init(_ buffer: PixelBuffer) {
            (width, height, format) = (buffer.width, buffer.height, buffer.format)
            var hasher = Hasher()
            for index in 0..<buffer.planeCount {
                buffer.withUnsafeBytes(ofPlane: index) { bytes, plane in
                    let rowBytes = plane.width * plane.bytesPerPixel
                    for row in 0..<plane.height {
                        hasher.combine(
                            bytes: UnsafeRawBufferPointer(rebasing: bytes[row * plane.bytesPerRow..<row * plane.bytesPerRow + rowBytes]))
                    }
                }
            }
            hash = hasher.finalize()
        }
    }
}
