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
    /// libpng could not read or write the PNG (damaged, truncated, not a PNG past its signature).
    case png(String)
    case pixelBuffer(PixelBufferError)
    case unwritableFile(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason): "cannot read \(path): \(reason)"
        case .unrecognizedFormat(let path): "\(path ?? "data") is not a JPEG, PNG, PGM or PPM image"
        case .jpeg(let message): "JPEG error: \(message)"
        case .jpegWarning(let message): "damaged JPEG data: \(message)"
        case .malformedPNM(let message): "malformed PGM/PPM: \(message)"
        case .png(let message): "PNG error: \(message)"
        case .pixelBuffer(let error): error.description
        case .unwritableFile(let path, let reason): "cannot write \(path): \(reason)"
        }
    }
}
