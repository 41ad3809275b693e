import FrameCore

/// Errors reading or writing image files and encoded frames.
public enum ImageIOError: Error, Sendable, CustomStringConvertible {
    /// The file could not be read (missing, a folder, permission denied…).
    case unreadableFile(path: String, reason: String)
    /// The bytes are not an image FrameKit reads (unknown signature).
    case unrecognizedFormat(path: String?)
    /// libjpeg-turbo reported an error decoding or encoding.
    case jpeg(String)
    /// libjpeg-turbo reported a warning: the data is damaged (a truncated or corrupt frame),
    /// even if it produced pixels.
    case jpegWarning(String)
    /// A PGM/PPM header or body is malformed or truncated.
    case malformedPNM(String)
    case pixelBuffer(PixelBufferError)
    case unwritableFile(path: String, reason: String)

    public var description: String {
        switch self {
        case let .unreadableFile(path, reason): "cannot read \(path): \(reason)"
        case let .unrecognizedFormat(path): "\(path ?? "data") is not a JPEG, PGM or PPM image"
        case let .jpeg(message): "JPEG error: \(message)"
        case let .jpegWarning(message): "damaged JPEG data: \(message)"
        case let .malformedPNM(message): "malformed PGM/PPM: \(message)"
        case let .pixelBuffer(error): error.description
        case let .unwritableFile(path, reason): "cannot write \(path): \(reason)"
        }
    }
}
