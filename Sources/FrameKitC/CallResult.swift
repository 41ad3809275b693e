import CFrameKitAPI
import FrameKit

/// A misuse the C API reports itself (a NULL handle, a code out of range): FK_ERR_INVALID_ARGUMENT.
struct InvalidArgument: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The C API's one door for errors: runs `body`, and turns whatever it throws into a status and
/// FrameKit's message in `error` (which may be NULL). Nothing is thrown across the API.
func reporting(_ error: UnsafeMutablePointer<fk_error>?, _ body: () throws -> Void) -> fk_status {
    do {
        try body()
        if let error { fill(error, status: fk_status(FK_OK), message: "") }
        return fk_status(FK_OK)
    } catch let failure {
        let status = statusCode(for: failure)
        if let error { fill(error, status: status, message: "\(failure)") }
        return status
    }
}

/// The status an error of FrameKit's maps to (framekit.h's FK_ERR_*).
func statusCode(for error: any Error) -> fk_status {
    switch error {
    case is InvalidArgument, is PixelBufferError: return fk_status(FK_ERR_INVALID_ARGUMENT)
    case let detector as FaceDetectorError:
        switch detector {
        case .modelNotFound, .modelLoadFailed: return fk_status(FK_ERR_MODEL)
        case .openCV, .inference: return fk_status(FK_ERR_DETECTION)
        case .invalidOptions, .pixelBuffer: return fk_status(FK_ERR_INVALID_ARGUMENT)
        }
    case let capture as CaptureError:
        if case .configuration = capture { return fk_status(FK_ERR_INVALID_ARGUMENT) }
        return fk_status(FK_ERR_SOURCE)
    default: return fk_status(FK_ERR_INTERNAL)
    }
}

/// Writes `status` and `message` (NUL-terminated, cut at a UTF-8 character boundary) into `error`.
func fill(_ error: UnsafeMutablePointer<fk_error>, status: fk_status, message: String) {
    error.pointee.status = status
    withUnsafeMutableBytes(of: &error.pointee.message) { buffer in
        var length = 0
        for scalar in message.unicodeScalars {
            let size = UTF8.width(scalar)
            guard length + size < buffer.count else { break }
            length += size
        }
        buffer.copyBytes(from: message.utf8.prefix(length))
        buffer[length] = 0
    }
}
