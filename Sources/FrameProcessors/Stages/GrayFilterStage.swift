import FrameCore
import FramePixels

/// Sobel edge magnitude, a binary threshold, or histogram equalisation of the gray image.
public struct GrayFilterStage: ImageStage {
    public enum Operation: Sendable, Equatable {
        case sobelMagnitude
        case threshold(UInt8, maxValue: UInt8)
        case equalizeHistogram
    }
    public let operation: Operation
    package let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String {
        switch operation {
        case .sobelMagnitude: "sobel"
        case .threshold: "threshold"
        case .equalizeHistogram: "equalize"
        }
    }
    public init(_ operation: Operation) { self.operation = operation }
    package func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, .gray8)
    }
    package func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        let source = try gray.luma(of: input)
        switch operation {
        case .sobelMagnitude: try Filters.sobelMagnitude(source, into: &output)
        case .threshold(let t, let maxValue): try Filters.threshold(source, into: &output, threshold: t, maxValue: maxValue)
        case .equalizeHistogram: try Filters.equalizeHistogram(source, into: &output)
        }
    }
}
