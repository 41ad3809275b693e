import Foundation

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

    /// The byte ranges of the JPEGs of an MJPEG stream — split where an EOI marker (FF D9) is
    /// followed by an SOI (FF D8) — found by reading the file in 1 MiB chunks; at most `limit`
    /// of them (the last then runs to the end of the file).
    func jpegRanges(limit: Int = .max) -> [Range<Int>] {
        let chunkSize = 1 << 20
        var chunk: [UInt8] = []
        var ranges: [Range<Int>] = []
        var start = 0
        var position = 0
        var next = 2
        var end = 0
        scanning: while ranges.count + 1 < limit {
            // Three bytes of overlap, so a marker pair across chunks is seen.
            read(at: position, count: chunkSize + 3, into: &chunk)
            end = position + chunk.count
            if chunk.count < 4 { break }
            for i in 0...(chunk.count - 4) where position + i >= next {
                if chunk[i] == 0xFF && chunk[i + 1] == 0xD9 && chunk[i + 2] == 0xFF && chunk[i + 3] == 0xD8 {
                    ranges.append(start..<(position + i + 2))
                    start = position + i + 2
                    next = position + i + 4
                    if ranges.count + 1 >= limit { break scanning }
                }
            }
            if chunk.count < chunkSize + 3 { break }
            position += chunkSize
        }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : end
        if start < size { ranges.append(start..<size) }
        return ranges
    }
}
