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
    /// A region (a crop, a detection region) not inside the image, or not on the format's
    /// grid (Y'CbCr crops start on even coordinates).
    case regionOutsideImage(Rect, width: Int, height: Int, format: PixelFormat)
    /// An operation that keeps the format was given buffers of two formats.
    case formatMismatch(source: PixelFormat, destination: PixelFormat, operation: String)

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
        case .regionOutsideImage(let r, let w, let h, let f):
            let a = f.sizeAlignment
            let grid = a.width > 1 || a.height > 1 ? " (\(f): x a multiple of \(a.width), y of \(a.height))" : ""
            return "region x \(r.x), y \(r.y), \(r.width)x\(r.height) is not inside the \(w)x\(h) image\(grid)"
        case .formatMismatch(let source, let destination, let op):
            return "\(op): the source is \(source), the destination \(destination); both must be the same format"
        case .exceedsPixelBudget(let w, let h, let budget):
            return "\(w)x\(h) is \(w * h) pixels, over the pixel budget of \(budget) (PixelBuffer.pixelBudget; default 7680x4320)"
        }
    }
}
