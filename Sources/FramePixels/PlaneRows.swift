import FrameCore

/// Walks plane 0 of a source and a destination of the same size row by row, for operations
/// that map each pixel on its own. When neither plane has padding after its rows, the whole
/// plane goes as one long row, as OpenCV treats a continuous matrix: one loop start and one
/// short tail per image instead of per row.
package enum PlaneRows {
    /// `body(source row, destination row, pixels in the row)`.
    @inlinable package static func forEach(
        _ source: PixelBuffer, _ destination: inout PixelBuffer,
        _ body: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>, Int) -> Void
    ) {
        let w = source.width
        let h = source.height
        let sourceRow = w * source.plane(0).bytesPerPixel
        let destinationRow = w * destination.plane(0).bytesPerPixel
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                if sp.bytesPerRow == sourceRow && dp.bytesPerRow == destinationRow {
                    body(s, d, w * h)
                } else {
                    for y in 0..<h { body(s + y * sp.bytesPerRow, d + y * dp.bytesPerRow, w) }
                }
            }
        }
    }
}
