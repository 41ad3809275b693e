import CFFmpeg
import FrameCapture
import FrameCore

/// H.264 in fragmented MP4 for a browser's Media Source Extensions: an init segment, then a
/// fragment a frame (libx264 at low-latency settings, a key frame a second and whenever a viewer
/// joins). One encoder serves every viewer of a stream. Not thread-safe: one caller at a time.
///
/// The stream's timeline advances one frame duration a frame, whatever the frames' capture times:
/// Media Source Extensions treat a step of more than two frame durations as a discontinuity and
/// drop every frame up to the next key frame, and libavformat's fragments move a frame after a
/// gap back to the end of the last one anyway. Each frame's time on that timeline is
/// ``Fragment/time``: what the page's faces are matched by. (A player shows the frames as they
/// arrive; when the camera drops some the stream's clock runs behind the wall clock, which the
/// page follows by the buffered edge, not by time.)
package final class LiveVideoEncoder {
    /// One frame's fragment (moof + mdat).
    package struct Fragment: Sendable {
        package let bytes: [UInt8]
        /// Whether it starts with a key frame: where a viewer may start.
        package let isKey: Bool
        /// The frame's presentation time on the stream's timeline, in seconds.
        package let time: Double
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let size: FrameSize
    /// What a viewer appends first: ftyp and moov with the stream's parameters.
    package let initSegment: [UInt8]
    /// The RFC 6381 codec string ("avc1.64001F") for `MediaSource.addSourceBuffer`.
    package let codec: String
    private let handle: OpaquePointer
    /// One frame's duration in 1/`CFFM_WRITER_TIMESCALE` s, as the shim writes it.
    private let frameTicks: Int64
    private var frames: Int64 = 0

    /// - Parameters:
    ///   - bitrate: the most bits a second the stream may take (CRF 23 below it).
    package init(size: FrameSize, frameRate: Double, bitrate: Int) throws(Failure) {
        var settings = cffm_live_settings(
            width: Int32(clamping: size.width), height: Int32(clamping: size.height), frame_rate: frameRate,
            bitrate: Int32(clamping: bitrate), keyframe_interval: 0)
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer?
        guard cffm_live_open(&settings, &raw, &message, message.count) == CFFM_OK, let raw else {
            throw Failure(description: String(cffmMessage: message))
        }
        handle = raw
        self.size = size
        frameTicks = Int64((Double(CFFM_WRITER_TIMESCALE) / frameRate).rounded())
        var count = 0
        let bytes = cffm_live_init_segment(raw, &count)!
        initSegment = Array(UnsafeBufferPointer(start: bytes, count: count))
        codec = String(cString: cffm_live_codec(raw))
    }

    deinit { cffm_live_close(handle) }

    /// Encodes `frame` (of the encoder's size), the stream's next; a key frame if `forceKey`.
    /// Nil while the encoder holds the frame back (it does not at these settings).
    package func encode(_ frame: PixelBuffer, forceKey: Bool) throws(Failure) -> Fragment? {
        guard frame.width == size.width, frame.height == size.height else {
            throw Failure(description: "a \(frame.width)x\(frame.height) frame for a \(size) stream")
        }
        let pts = frames * frameTicks
        var message = [CChar](repeating: 0, count: 512)
        var bytes: UnsafePointer<UInt8>?
        var count = 0
        var key: Int32 = 0
        let status = frame.withEncoderInput { planes, strides, layout in
            cffm_live_encode(handle, planes, strides, layout, pts, forceKey ? 1 : 0, &bytes, &count, &key, &message, message.count)
        }
        guard status == CFFM_OK else { throw Failure(description: String(cffmMessage: message)) }
        frames += 1
        guard let bytes, count > 0 else { return nil }
        return Fragment(
            bytes: Array(UnsafeBufferPointer(start: bytes, count: count)), isKey: key != 0,
            time: Double(pts) / Double(CFFM_WRITER_TIMESCALE))
    }
}
