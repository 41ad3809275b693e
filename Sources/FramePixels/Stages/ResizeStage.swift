import FrameCore

/// Resizes frames to a fixed size: area averaging (down-scaling, gray) or bilinear.
public struct ResizeStage: ImageStage {
    public enum Method: String, Sendable { case area, bilinear }
    public let width: Int, height: Int, method: Method
    package let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String { "resize" }
    /// A size that is not positive is `PixelBufferError/invalidSize(width:height:format:)`.
    public init(width: Int, height: Int, method: Method = .area) throws(PixelBufferError) {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height, format: .gray8) }
        self.width = width
        self.height = height
        self.method = method
    }
    package func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        let format: PixelFormat = method == .bilinear && (input.format == .rgb24 || input.format == .bgra32) ? input.format : .gray8
        return (width, height, format)
    }
    public func pointMap(width inputWidth: Int, height inputHeight: Int) -> PointMap {
        .scale(Double(width) / Double(inputWidth), Double(height) / Double(inputHeight))
    }
    package func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        if method == .bilinear && output.format != .gray8 { return try Resize.bilinear(input, into: &output) }
        let source = try gray.luma(of: input)
        if method == .area { try Resize.area(source, into: &output) } else { try Resize.bilinear(source, into: &output) }
    }
}
