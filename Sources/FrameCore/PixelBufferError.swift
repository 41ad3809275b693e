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
        case .invalidSize(let w, let h, let f):
            let a = f.sizeAlignment
            return "invalid size \(w)x\(h) for \(f): both must be positive, width a multiple of \(a.width), height of \(a.height)"
        case .invalidBytesPerRow(let p, let bpr, let min):
            return "plane \(p): bytesPerRow \(bpr) is less than the \(min) bytes a row needs"
        case .storageTooSmall(let n, let a):
            return "pixel storage holds \(a) bytes; the layout needs \(n)"
        case .unsupportedFormat(let f, let op):
            return "\(op) does not support \(f)"
        case .sizeMismatch(let e, let a):
            return "size mismatch: expected \(e), got \(a)"
        case .exceedsPixelBudget(let w, let h, let budget):
            return "\(w)x\(h) is \(w * h) pixels, over the pixel budget of \(budget) (PixelBuffer.pixelBudget; default 7680x4320)"
        }
    }
}
