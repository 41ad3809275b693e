import Foundation
import FrameImageIO

/// Reads a file with pread(2), never through a mapping: a file truncated or shrunk while it is
/// read gives short reads — a corrupt or last frame — instead of SIGBUS on a mapped page that
/// no longer exists. One open descriptor, closed when the reader goes away.
final class FileReader {
    let path: String
    private let fd: Int32

    init(path: String) throws(CaptureError) {
        self.path = path
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
    }

    deinit { close(fd) }

    /// Reads up to `count` bytes at `offset` into `buffer` (resized to what was read).
    func read(at offset: Int, count: Int, into buffer: inout [UInt8]) {
        if buffer.count != count { buffer = [UInt8](repeating: 0, count: count) }
        var done = 0
        buffer.withUnsafeMutableBytes { raw in
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break } // end of file (or an error: what was read is all there is)
                done += n
            }
        }
        if done < count { buffer.removeLast(count - done) }
    }

    /// The byte ranges of the JPEGs of an MJPEG stream, found by walking their structure
    /// (``JPEG/StreamSplitter``: bytes between frames are skipped, a damaged frame ends where its
    /// structure breaks) while reading the file in 1 MiB chunks; the first `limit` of them.
    func jpegRanges(limit: Int = .max) -> [Range<Int>] {
        let chunkSize = 1 << 20
        var chunk: [UInt8] = []
        var splitter = JPEG.StreamSplitter()
        var position = 0
        while splitter.frames.count < limit {
            read(at: position, count: chunkSize, into: &chunk)
            chunk.withUnsafeBytes { splitter.consume($0, at: position) }
            position += chunk.count
            if chunk.count < chunkSize {
                splitter.finish(at: position)
                break
            }
        }
        return Array(splitter.frames.prefix(limit))
    }
}
