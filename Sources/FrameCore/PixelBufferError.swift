/// Errors about the shape of pixel data: wrong sizes, strides or formats.
public enum PixelBufferError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidSize(width: Int, height: Int, format: PixelFormat)
    case invalidBytesPerRow(plane: Int, bytesPerRow: Int, minimum: Int)
    case storageTooSmall(needed: Int, available: Int)
    case unsupportedFormat(PixelFormat, operation: String)
    case sizeMismatch(expected: String, actual: String)
    /// More pixels than ``PixelBuffer/pixelBudget`` allows: refused before any allocation (a
    /// forged header costs nothing).
    case exceedsPixelBudget(width: Int, height: Int, budget: Int)

    public var description: String {
        switch self {
        case let .invalidSize(w, h, f):
            let a = f.sizeAlignment
            return "invalid size \(w)x\(h) for \(f): both must be positive, width a multiple of \(a.width), height of \(a.height)"
        case let .invalidBytesPerRow(p, bpr, min):
            return "plane \(p): bytesPerRow \(bpr) is less than the \(min) bytes a row needs"
        case let .storageTooSmall(n, a):
            return "pixel storage holds \(a) bytes; the layout needs \(n)"
        case let .unsupportedFormat(f, op):
            return "\(op) does not support \(f)"
        case let .sizeMismatch(e, a):
            return "size mismatch: expected \(e), got \(a)"
        case let .exceedsPixelBudget(w, h, budget):
            return "\(w)x\(h) is \(w * h) pixels, over the pixel budget of \(budget) (PixelBuffer.pixelBudget; default 7680x4320)"
        }
    }
}
