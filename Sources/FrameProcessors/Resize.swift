import FrameCore

/// Resampling of 8-bit planes.
public enum Resize {
    /// Area-average resample of plane `plane` of `source` (1 byte per sample) into the 1-plane
    /// `destination` (gray8): each output pixel is the mean of the source area it covers, as
    /// OpenCV's `INTER_AREA` for down-scaling.
    public static func area(_ source: PixelBuffer, into destination: inout PixelBuffer, plane: Int = 0) throws(PixelBufferError) {
        let sp = source.plane(plane)
        guard sp.bytesPerPixel == 1, destination.format == .gray8 else {
            throw .unsupportedFormat(destination.format, operation: "area resize (8-bit single-channel planes)")
        }
        let dw = destination.width, dh = destination.height
        guard dw <= sp.width, dh <= sp.height else {
            throw .sizeMismatch(expected: "at most \(sp.width)x\(sp.height) (area resize shrinks)", actual: "\(dw)x\(dh)")
        }
        let xTaps = taps(source: sp.width, destination: dw)
        let yTaps = taps(source: sp.height, destination: dh)
        var rowSums = [Float](repeating: 0, count: sp.width)
        source.withUnsafeBytes(ofPlane: plane) { src, _ in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                for dy in 0..<dh {
                    for i in 0..<sp.width { rowSums[i] = 0 }
                    for (sy, wy) in yTaps[dy] {
                        let base = sy * sp.bytesPerRow
                        for i in 0..<sp.width { rowSums[i] += Float(src[base + i]) * wy }
                    }
                    for dx in 0..<dw {
                        var acc: Float = 0
                        for (sx, wx) in xTaps[dx] { acc += rowSums[sx] * wx }
                        dst[dy * dp.bytesPerRow + dx] = UInt8(clamping: Int((acc).rounded()))
                    }
                }
            }
        }
    }

    /// For each output index, the source indices it covers and their weights (summing to 1).
    static func taps(source: Int, destination: Int) -> [[(Int, Float)]] {
        let scale = Double(source) / Double(destination)
        return (0..<destination).map { d in
            let start = Double(d) * scale, end = start + scale
            var list: [(Int, Float)] = []
            var s = Int(start)
            while Double(s) < end - 1e-9, s < source {
                let overlap = min(end, Double(s + 1)) - max(start, Double(s))
                if overlap > 1e-9 { list.append((s, Float(overlap / scale))) }
                s += 1
            }
            return list
        }
    }
}
