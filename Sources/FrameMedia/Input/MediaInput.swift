import CFFmpeg
import FrameCapture
import FrameCore

/// One open libavformat input and its decoder (a `cffm_media`), closed when the last
/// reference goes. `@unchecked Sendable`: the handle is used by one thread at a time — the one
/// that opened it, then the capture thread — except ``interrupt()``, which only sets an atomic
/// flag the C side reads (`cffm_interrupt` is documented as callable from any thread).
final class MediaInput: @unchecked Sendable {
    struct Info: Sendable {
        var size: FrameSize
        var frameRate: Double
        var duration: Double
        /// Bytes the input says it holds (a file's size, an http response's length); nil if
        /// it does not say (a live stream).
        var byteSize: Int?
        var pixelFormat: PixelFormat
        var codec: String
        var container: String
    }

    let info: Info
    private let handle: OpaquePointer

    enum Failure: Error {
        case interrupted(String)
        case failed(String)
        /// The input was read and its video is over the pixel budget, or what it sent is not a
        /// video FrameKit reads (`CFFM_REJECTED`): a data error, which reading again will not mend.
        case rejected(String)
    }

    /// Opens `location` (a path or a URL), its demuxer probed; `timeout`: how long one open or
    /// read may block. `isLive`: an http response with no length that the server closes has
    /// ended (FFmpeg calls it an I/O error), as a tcp stream that closes has; not for files: a
    /// chunked body cut off looks the same.
    init(_ location: String, threads: Int, timeout: Double, isLive: Bool) throws(Failure) {
        var raw: OpaquePointer?
        var info = cffm_info()
        var message = [CChar](repeating: 0, count: 512)
        let status = cffm_open(
            location, Int32(threads), timeout, Int64(PixelBuffer.pixelBudget), &raw, &info, &message, message.count)
        guard status == CFFM_OK, let raw else {
            let text = String(cffmMessage: message)
            throw status == CFFM_INTERRUPTED ? .interrupted(text) : status == CFFM_REJECTED ? .rejected(text) : .failed(text)
        }
        handle = raw
        if isLive { cffm_read_close_as_end(raw) }
        self.info = Info(
            size: FrameSize(width: Int(info.width), height: Int(info.height)), frameRate: info.frame_rate, duration: info.duration,
            byteSize: info.byte_size > 0 ? Int(info.byte_size) : nil, pixelFormat: Self.pixelFormat(info.layout),
            codec: Self.string(info.codec), container: Self.string(info.container))
    }

    deinit { cffm_close(handle) }

    /// A decoded frame as the C side gives it: planes valid until the next ``next()``.
    struct DecodedFrame {
        let raw: cffm_frame
        var time: Double { raw.time }
        var damaged: Bool { raw.damaged != 0 }
        var width: Int { Int(raw.width) }
        var height: Int { Int(raw.height) }
        var pixelFormat: PixelFormat { MediaInput.pixelFormat(raw.layout) }

        /// Copies the planes into `buffer` (of this frame's format, at most its size: an odd
        /// last row or column is left out); false if the layouts differ.
        func copy(into buffer: inout PixelBuffer) -> Bool {
            guard pixelFormat == buffer.format || (pixelFormat == .nv12VideoRange && buffer.format == .nv12FullRange) else {
                return false
            }
            let planes = [raw.planes.0, raw.planes.1, raw.planes.2]
            let strides = [Int(raw.strides.0), Int(raw.strides.1), Int(raw.strides.2)]
            for index in 0..<buffer.planeCount {
                guard let source = planes[index] else { return false }
                let stride = strides[index]
                buffer.withUnsafeMutableBytes(ofPlane: index) { destination, plane in
                    let rowBytes = plane.width * plane.bytesPerPixel
                    for row in 0..<plane.height {
                        (destination.baseAddress! + row * plane.bytesPerRow).copyMemory(from: source + row * stride, byteCount: rowBytes)
                    }
                }
            }
            return true
        }
    }

    enum Step {
        case frame(DecodedFrame)
        case corrupt(String)
        case end
        case interrupted(String)
        /// A live stream sent more than a frame can take without completing one
        /// (`cffm_frame_byte_limit`); the input is unusable after it.
        case overlong(String)
        case failed(String)
    }

    /// The next decoded frame; its planes stay valid until the next call.
    func next() -> Step {
        var frame = cffm_frame()
        var message = [CChar](repeating: 0, count: 512)
        switch cffm_next(handle, &frame, &message, message.count) {
        case CFFM_OK: return .frame(DecodedFrame(raw: frame))
        case CFFM_END: return .end
        case CFFM_CORRUPT: return .corrupt(String(cffmMessage: message))
        case CFFM_INTERRUPTED: return .interrupted(String(cffmMessage: message))
        case CFFM_OVERLONG: return .overlong(String(cffmMessage: message))
        default: return .failed(String(cffmMessage: message))
        }
    }

    func seek(to seconds: Double) throws(Failure) {
        var message = [CChar](repeating: 0, count: 512)
        guard cffm_seek(handle, seconds, &message, message.count) == CFFM_OK else { throw .failed(String(cffmMessage: message)) }
    }

    /// Makes a blocking read return soon (any thread).
    func interrupt() { cffm_interrupt(handle) }

    static func pixelFormat(_ layout: cffm_layout) -> PixelFormat {
        switch layout {
        case CFFM_LAYOUT_NV12: .nv12VideoRange
        case CFFM_LAYOUT_GRAY8: .gray8
        default: .i420
        }
    }

    /// Whether the linked libavformat speaks `scheme` ("rtsp", "srt"…).
    static func hasProtocol(_ scheme: String) -> Bool { cffm_has_protocol(scheme) != 0 }

    private static func string<T>(_ tuple: T) -> String {
        withUnsafeBytes(of: tuple) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
