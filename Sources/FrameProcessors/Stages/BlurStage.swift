import FrameCore
import FramePixels

/// Box or Gaussian blur of the frame's gray image.
public struct BlurStage: ImageStage {
    public enum Kind: String, Sendable { case box, gaussian }
    public let kind: Kind, size: Filters.KernelSize
    package let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String { "\(kind.rawValue)-blur-\(size.rawValue)" }
    public init(_ kind: Kind, size: Filters.KernelSize) {
        self.kind = kind
        self.size = size
    }
    package func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, .gray8)
    }
    package func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        let source = try gray.luma(of: input)
        if kind == .box {
            try Filters.boxBlur(source, into: &output, size: size)
        } else {
            try Filters.gaussianBlur(source, into: &output, size: size)
        }
    }
}
