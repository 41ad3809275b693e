import FrameCore
import Synchronization

/// A stage's output buffer, reused frame after frame: no allocation per frame once the
/// consumer lets go of the previous frame (if it has not, copy-on-write makes a fresh buffer
/// rather than overwrite what it holds).
package final class ScratchBuffer: Sendable {
    package init() {}
    private let slot = Mutex<PixelBuffer?>(nil)

    /// Moves the kept buffer out if it has this shape (so this stage's own reference does not
    /// force a copy), else makes a new one.
    package func take(width: Int, height: Int, format: PixelFormat) throws(PixelBufferError) -> PixelBuffer {
        let kept = slot.withLock { s -> PixelBuffer? in
            defer { s = nil }
            return s
        }
        if let kept, kept.width == width, kept.height == height, kept.format == format { return kept }
        return try PixelBuffer(width: width, height: height, format: format)
    }

    package func keep(_ buffer: PixelBuffer) { slot.withLock { $0 = buffer } }
}
