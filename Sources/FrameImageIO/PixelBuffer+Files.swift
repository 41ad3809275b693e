import Foundation
import FrameCore

extension PixelBuffer {
    /// Reads a JPEG, PNG, PGM or PPM file (by its bytes, whatever its name). Colour images come
    /// as `PixelFormat/rgb24`, gray ones as `PixelFormat/gray8`.
    public init(contentsOf url: URL) throws(ImageIOError) {
        let bytes = try ImageFile.read(url)
        if JPEG.hasSignature(bytes) {
            self = try JPEG.decode(bytes)
        } else if PNG.hasSignature(bytes) {
            self = try PNG.decode(bytes)
        } else if PNM.hasSignature(bytes) {
            self = try PNM.decode(bytes)
        } else {
            throw .unrecognizedFormat(path: url.path)
        }
    }

    /// Writes the buffer as JPEG (`.jpg`/`.jpeg`), PNG (`.png`) or PGM/PPM
    /// (`.pgm`/`.ppm`/`.pnm`), by extension. The file is complete or absent: written under a
    /// temporary name beside it, then renamed.
    public func write(to url: URL, quality: Int = 90) throws(ImageIOError) {
        let bytes: [UInt8]
        switch url.pathExtension.lowercased() {
        case "jpg", "jpeg": bytes = try JPEG.encode(self, quality: quality)
        case "png": bytes = try PNG.encode(self)
        case "pgm", "ppm", "pnm": bytes = try PNM.encode(self)
        default: throw .unwritableFile(path: url.path, reason: "unknown extension (use .jpg, .png, .pgm or .ppm)")
        }
        do { try Data(bytes).write(to: url, options: .atomic) } catch {
            throw .unwritableFile(path: url.path, reason: error.localizedDescription)
        }
    }
}

/// File reading with errors that name the file.
public enum ImageFile {
    /// The most bytes a JPEG, PNG or PNM within `PixelBuffer.pixelBudget` can take
    /// (libjpeg-turbo's bound, 6 bytes a pixel at worst — an uncompressed 8-bit RGBA PNG takes
    /// about 4 — plus room for metadata): a larger file is not such an image, and is refused
    /// before a byte of it is read (a 2 GB file that began like a JPEG
    /// was read whole first).
    public static var maximumBytes: Int { PixelBuffer.pixelBudget * 6 + (4 << 20) }

    /// Reads a whole image file, refusing one larger than ``maximumBytes`` unread.
    public static func read(_ url: URL) throws(ImageIOError) -> [UInt8] {
        var info = stat()
        if stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) > maximumBytes {
            throw .unreadableFile(
                path: url.path,
                reason: "\(info.st_size) bytes: larger than any JPEG or PNM within the pixel budget could be (\(maximumBytes))")
        }
        do {
            return try [UInt8](Data(contentsOf: url))
        } catch {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory)
            let reason = !exists ? "no such file" : isDirectory.boolValue ? "is a directory" : "permission denied or unreadable"
            throw .unreadableFile(path: url.path, reason: reason)
        }
    }
}
