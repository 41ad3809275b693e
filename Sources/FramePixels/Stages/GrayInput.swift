import FrameCore

/// The gray view of a frame: the luma plane itself for GRAY8, NV12 and I420 (no work), else a
/// conversion into a reused buffer.
package final class GrayInput: Sendable {
    package init() {}
    let scratch = ScratchBuffer()
    package func luma(of input: PixelBuffer) throws(PixelBufferError) -> PixelBuffer {
        switch input.format {
        case .gray8: return input
        case .nv12VideoRange, .nv12FullRange, .i420:
            return try input.lumaPlane()
        default:
            var gray = try scratch.take(width: input.width, height: input.height, format: .gray8)
            try ColorConversion.convertToGray(input, into: &gray)
            scratch.keep(gray)
            return gray
        }
    }
}
