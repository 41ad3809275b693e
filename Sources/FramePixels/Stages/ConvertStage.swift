import FrameCore

/// Converts frames to `format` (gray, RGB, BGRA, or any Y'CbCr layout).
public struct ConvertStage: ImageStage {
    public let format: PixelFormat
    public let matrix: ColorConversion.Matrix
    package let scratch = ScratchBuffer()
    public var name: String { "convert-\(format.shortName)" }
    public init(to format: PixelFormat, matrix: ColorConversion.Matrix = .bt601) {
        self.format = format
        self.matrix = matrix
    }
    package func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, format)
    }
    package func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        if ColorConversion.convertsToYCbCr(from: input.format, to: format) {
            return try ColorConversion.convertToYCbCr(input, into: &output, matrix: matrix)
        }
        switch format {
        case .rgb24, .bgra32, .gray8: try ColorConversion.convert(input, into: &output, matrix: matrix)
        default: try PlanarYCbCr(reading: input).write(into: &output)
        }
    }
}
