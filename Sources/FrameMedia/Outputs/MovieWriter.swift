import CFFmpeg
import Foundation
import FrameCapture
import FrameCore
import FrameImageIO

#if canImport(Glibc)
import Glibc
#endif

/// How a ``MovieFileOutput`` writes its frames: one writer per container, chosen by the URL's
/// extension. Used on the output's queue, under its file lock, by one thread at a time.
protocol MovieWriter: AnyObject {
    var frameCount: Int { get }
    /// Whether `prepare` has written the headers: until then the reserved file is empty, not a
    /// movie, and a recording that ends there removes it.
    var isPrepared: Bool { get }
    var bytesWritten: Int { get }
    /// The largest file the container can hold (no limit for OpenDML AVI, MP4 or MOV).
    var maximumBytes: Int { get }
    /// Writes the headers for frames of this size and rate (once, at the first frame, before
    /// any limit is checked: a recording a limit ends at once is still a valid, empty file).
    func prepare(width: Int, height: Int, frameRate: Double) throws
    /// Writes one frame, presented `time` seconds after the recording's first; false once the
    /// file is at `maxBytes`, which it never passes (MJPEG: the frame is not written; H.264: the
    /// encoder may have taken it, and no packet that would pass the limit reaches the file).
    /// H.264 keeps `time` (a dropped frame leaves a gap, so the file lasts as long as was
    /// recorded); Motion-JPEG AVI is constant-rate: frame after frame at the session's rate.
    func write(_ frame: PixelBuffer, at time: Double, maxBytes: Int?) throws -> Bool
    /// Completes the file (index, trailer) and closes it.
    func close() throws
}

package enum MovieFile {
    /// The containers and what goes in them.
    enum Container: String {
        case avi, mp4, mov
        init?(url: URL) { self.init(rawValue: url.pathExtension.lowercased()) }
    }

    /// Creates `url` for writing, atomically refusing a name that exists (`O_EXCL`), so a file
    /// created meanwhile is never replaced. Through the one syscall door (EINTR retried).
    package static func reserve(_ url: URL) throws(CaptureError) -> Int32 {
        do {
            let fd = try retryingSystemCall("open(\(url.path))") {
                let result = Glibc.open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
                return (Int(result), errno)
            }
            return Int32(fd)
        } catch {
            let reason =
                switch error.errno {
                case EEXIST: "it exists; FrameKit does not overwrite recordings"
                case ENOENT: "its folder does not exist"
                case ENOTDIR: "a part of its folder path is not a folder"
                case EACCES, EPERM: "permission denied"
                case EROFS: "the file system is read-only"
                case ENOSPC: "the disk is full"
                default: String(cString: strerror(error.errno))
                }
            throw .cannotWrite(path: url.path, reason: reason)
        }
    }
}

/// Motion-JPEG in AVI: each frame a JPEG (libjpeg-turbo, at `quality`), passed through
/// untouched to libavformat's AVI muxer, which writes OpenDML (RIFF-AVIX chunks past 1 GiB,
/// `indx`/`ix00` indexes, `dmlh`) so a recording may run for hours. Each frame reaches the file
/// as it is written; the indexes come at `close()`.
package final class MJPEGMovieWriter: MovieWriter {
    private let path: String
    private let encoder: JPEG.Encoder
    private let quality: Int
    private var writer: OpaquePointer?
    private var frameRate = 30.0
    package private(set) var frameCount = 0

    /// `fileDescriptor`: the reserved file, closed here; libavformat reopens it by name.
    package init(path: String, fileDescriptor: Int32, quality: Int) throws {
        encoder = try JPEG.Encoder() // before the close: on failure the caller closes the file
        _ = Glibc.close(fileDescriptor)
        self.path = path
        self.quality = quality
    }

    deinit { cffm_writer_free(writer) }

    package var bytesWritten: Int { Int(cffm_writer_bytes(writer)) }
    package var isPrepared: Bool { writer != nil }
    package var maximumBytes: Int { Int.max }

    package func prepare(width: Int, height: Int, frameRate: Double) throws {
        guard writer == nil else { return }
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer?
        guard cffm_writer_open_mjpeg(path, Int32(width), Int32(height), frameRate, &raw, &message, message.count) == CFFM_OK, let raw
        else { throw H264MovieWriter.Failure(description: String(cffmMessage: message)) }
        writer = raw
        self.frameRate = frameRate
    }

    package func write(_ frame: PixelBuffer, at time: Double, maxBytes: Int?) throws -> Bool {
        let jpeg = try encoder.encode(frame, quality: quality)
        return try write(jpeg: jpeg, at: time, maxBytes: maxBytes)
    }

    /// Appends a JPEG as the frame at `time` seconds from the first (nil: the next slot). AVI
    /// is constant-rate: after dropped frames the gap is filled with empty chunks, so the file
    /// keeps time (a gap over a minute — a clock that jumped — is not filled). False, with
    /// nothing written, when the file would pass `maxBytes`.
    package func write(jpeg: [UInt8], at time: Double? = nil, maxBytes: Int?) throws -> Bool {
        guard let writer else { throw H264MovieWriter.Failure(description: "prepare(width:height:frameRate:) was not called") }
        let next = cffm_writer_slots(writer)
        var slot = time.map { Int64(saturating: ($0 * frameRate).rounded()) } ?? next
        if slot - next > Int64(frameRate * 60) { slot = next }
        // A frame whose slot is already taken (the camera switched to a higher rate than the
        // file's: AVI has one rate) is left out, so the file keeps time; it played the faster
        // frames at the old rate (a 3 s recording lasted 4.5 s). Not an error: the recording goes on.
        if time != nil && slot < next { return true }
        let gap = Int(max(0, slot - next))
        // The chunk header (8) and the index entries (24) it brings, and as much per empty chunk.
        if let maxBytes, bytesWritten + jpeg.count + 32 + 32 * gap > maxBytes { return false }
        var message = [CChar](repeating: 0, count: 512)
        let status = jpeg.withUnsafeBufferPointer {
            cffm_writer_write_packet(writer, $0.baseAddress, Int32($0.count), slot, &message, message.count)
        }
        guard status == CFFM_OK else { throw H264MovieWriter.Failure(description: String(cffmMessage: message)) }
        frameCount += 1
        return true
    }

    package func close() throws {
        guard let writer else { return }
        var message = [CChar](repeating: 0, count: 512)
        guard cffm_writer_finish(writer, &message, message.count) == CFFM_OK else {
            throw H264MovieWriter.Failure(description: String(cffmMessage: message))
        }
    }
}

/// H.264 (libx264 through libavcodec) in a fragmented MP4 or MOV: playable up to its last
/// fragment (one per key frame) even if the process is killed or the disk fills.
final class H264MovieWriter: MovieWriter {
    private let path: String
    private let container: MovieFile.Container
    private let settings: MovieFileOutput.H264Settings
    private var writer: OpaquePointer?
    /// The last timestamp given to the encoder (1/90000 s), which must increase.
    private var lastPTS: Int64 = -1
    /// Frames in the file: the encoder holds some back, and the size limit may cut the last.
    var frameCount: Int { Int(cffm_writer_frames_written(writer)) }

    /// `fileDescriptor`: the reserved file, closed here; libavformat reopens it by name.
    init(path: String, fileDescriptor: Int32, container: MovieFile.Container, settings: MovieFileOutput.H264Settings) {
        _ = Glibc.close(fileDescriptor)
        self.path = path
        self.container = container
        self.settings = settings
    }

    deinit { cffm_writer_free(writer) }

    var bytesWritten: Int { Int(cffm_writer_bytes(writer)) }
    var isPrepared: Bool { writer != nil }
    var maximumBytes: Int { Int.max }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func prepare(width: Int, height: Int, frameRate: Double) throws {
        guard writer == nil else { return }
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer?
        let status = settings.preset.withCString { preset in
            var s = cffm_writer_settings(
                width: Int32(width), height: Int32(height), frame_rate: frameRate, crf: Int32(settings.crf), preset: preset,
                keyframe_interval: Int32(max(1, (settings.keyframeInterval * frameRate).rounded())))
            return cffm_writer_open(path, container.rawValue, &s, &raw, &message, message.count)
        }
        guard status == CFFM_OK, let raw else { throw Failure(description: String(cffmMessage: message)) }
        writer = raw
    }

    func write(_ frame: PixelBuffer, at time: Double, maxBytes: Int?) throws -> Bool {
        var message = [CChar](repeating: 0, count: 512)
        guard writer != nil else { throw Failure(description: "prepare(width:height:frameRate:) was not called") }
        // The shim holds the limit packet by packet (none that would pass it is written); the
        // recording ends once it has held one back, or once the projected size (the frames the
        // encoder still holds counted at a typical frame's size) has reached the limit.
        if let maxBytes {
            cffm_writer_set_limit(writer, Int64(maxBytes))
            if cffm_writer_at_limit(writer) != 0 || bytesWritten >= maxBytes { return false }
        }
        // The frame's own time; a timestamp that does not increase (a source's clock stepping
        // back) is moved just after the last one.
        let pts = max(lastPTS + 1, Int64(saturating: (time * Double(CFFM_WRITER_TIMESCALE)).rounded()))
        let status = frame.withEncoderInput { planes, strides, layout in
            cffm_writer_write(writer, planes, strides, layout, pts, &message, message.count)
        }
        guard status == CFFM_OK else { throw Failure(description: String(cffmMessage: message)) }
        lastPTS = pts
        return cffm_writer_at_limit(writer) == 0
    }

    func close() throws {
        guard let writer else { return }
        var message = [CChar](repeating: 0, count: 512)
        guard cffm_writer_finish(writer, &message, message.count) == CFFM_OK else {
            throw Failure(description: String(cffmMessage: message))
        }
    }
}
