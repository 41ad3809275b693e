import FrameCore

/// Colour-space conversions between FrameKit's pixel formats.
///
/// Y'CbCr → RGB uses BT.601 or BT.709 coefficients in 14-bit fixed point; gray from RGB uses
/// BT.601 luma weights (what OpenCV's `cvtColor(…GRAY)` uses).
public enum ColorConversion {
    public enum Matrix: String, Sendable, CaseIterable { case bt601, bt709 }

    /// Gray (luma) from any format into a ``PixelFormat/gray8`` buffer of the same size.
    public static func convertToGray(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireSameSize(source, destination, format: .gray8)
        let w = source.width, h = source.height
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                let input = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for row in 0..<h {
                    let s = input + row * sp.bytesPerRow, d = out + row * dp.bytesPerRow
                    switch source.format {
                    case .gray8, .nv12VideoRange, .nv12FullRange, .i420:
                        d.update(from: s, count: w)
                    case .yuyv:
                        for x in 0..<w { d[x] = s[2 &* x] }
                    case .bgra32:
                        grayRow(s, d, w, stride: 4, r: 2, g: 1, b: 0)
                    case .rgb24:
                        grayRow(s, d, w, stride: 3, r: 0, g: 1, b: 2)
                    }
                }
            }
        }
    }

    // Y = 0.299 R + 0.587 G + 0.114 B in 14-bit fixed point, as OpenCV rounds it.
    @inline(__always)
    static func grayRow(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ w: Int,
                        stride: Int, r: Int, g: Int, b: Int) {
        for x in 0..<w {
            let p = s + x &* stride
            let y = UInt32(p[r]) &* 4899 &+ UInt32(p[g]) &* 9617 &+ UInt32(p[b]) &* 1868 &+ 8192
            d[x] = UInt8(truncatingIfNeeded: y &>> 14)
        }
    }

    /// Converts any Y'CbCr buffer (NV12, I420, YUYV) to RGB24 or BGRA, or copies between RGB
    /// layouts. `matrix` and the source's range decide the coefficients.
    public static func convert(_ source: PixelBuffer, into destination: inout PixelBuffer,
                               matrix: Matrix = .bt601) throws(PixelBufferError) {
        guard source.width == destination.width, source.height == destination.height else {
            throw .sizeMismatch(expected: "\(source.width)x\(source.height)", actual: "\(destination.width)x\(destination.height)")
        }
        if destination.format == .gray8 { return try convertToGray(source, into: &destination) }
        guard destination.format == .rgb24 || destination.format == .bgra32 else {
            throw .unsupportedFormat(destination.format, operation: "conversion target (use rgb24, bgra32 or gray8)")
        }
        let outStride = destination.format == .rgb24 ? 3 : 4
        let (ri, bi) = destination.format == .rgb24 ? (0, 2) : (2, 0)
        let w = source.width, h = source.height
        let full = source.format == .nv12FullRange
        // Coefficients in 14-bit fixed point.
        let (kr, kgu, kgv, kb): (Double, Double, Double, Double) = matrix == .bt601
            ? (1.402, 0.344136, 0.714136, 1.772) : (1.5748, 0.187324, 0.468124, 1.8556)
        let ys = full ? 1.0 : 255.0 / 219.0, cs = full ? 1.0 : 255.0 / 224.0
        let cY = Int32((ys * 16384).rounded()), cRV = Int32((kr * cs * 16384).rounded())
        let cGU = Int32((kgu * cs * 16384).rounded()), cGV = Int32((kgv * cs * 16384).rounded())
        let cBU = Int32((kb * cs * 16384).rounded()), yOffset: Int32 = full ? 0 : 16
        @inline(__always) func clamp(_ v: Int32) -> UInt8 { UInt8(clamping: (v &+ 8192) >> 14) }

        switch source.format {
        case .rgb24, .bgra32, .gray8:
            try copyRGB(source, into: &destination)
            return
        default: break
        }
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for row in 0..<h {
                let d = out + row * dp.bytesPerRow
                for x in 0..<w {
                    let (yv, u, v) = sample(source, x: x, y: row)
                    let yy = (Int32(yv) &- yOffset) &* cY
                    let uu = Int32(u) &- 128, vv = Int32(v) &- 128
                    let o = x &* outStride
                    d[o + ri] = clamp(yy &+ cRV &* vv)
                    d[o + 1] = clamp(yy &- cGU &* uu &- cGV &* vv)
                    d[o + bi] = clamp(yy &+ cBU &* uu)
                    if outStride == 4 { d[o + 3] = 255 }
                }
            }
        }
    }

    @inline(__always)
    static func sample(_ b: PixelBuffer, x: Int, y: Int) -> (UInt8, UInt8, UInt8) {
        switch b.format {
        case .yuyv:
            return b.withUnsafeBytes(ofPlane: 0) { s, p in
                let o = y * p.bytesPerRow + (x & ~1) * 2
                return (s[y * p.bytesPerRow + x * 2], s[o + 1], s[o + 3])
            }
        case .i420:
            let yv = b.withUnsafeBytes(ofPlane: 0) { s, p in s[y * p.bytesPerRow + x] }
            let u = b.withUnsafeBytes(ofPlane: 1) { s, p in s[(y / 2) * p.bytesPerRow + x / 2] }
            let v = b.withUnsafeBytes(ofPlane: 2) { s, p in s[(y / 2) * p.bytesPerRow + x / 2] }
            return (yv, u, v)
        default:
            let yv = b.withUnsafeBytes(ofPlane: 0) { s, p in s[y * p.bytesPerRow + x] }
            return b.withUnsafeBytes(ofPlane: 1) { s, p in
                let o = (y / 2) * p.bytesPerRow + (x / 2) * 2
                return (yv, s[o], s[o + 1])
            }
        }
    }

    static func copyRGB(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        let inStride = source.format == .rgb24 ? 3 : source.format == .bgra32 ? 4 : 1
        let (sr, sb) = source.format == .bgra32 ? (2, 0) : (0, 2)
        let outStride = destination.format == .rgb24 ? 3 : 4
        let (dr, db) = destination.format == .rgb24 ? (0, 2) : (2, 0)
        let w = source.width, h = source.height
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                for row in 0..<h {
                    for x in 0..<w {
                        let i = row * sp.bytesPerRow + x * inStride, o = row * dp.bytesPerRow + x * outStride
                        if inStride == 1 {
                            dst[o] = src[i]; dst[o + 1] = src[i]; dst[o + 2] = src[i]
                        } else {
                            dst[o + dr] = src[i + sr]; dst[o + 1] = src[i + 1]; dst[o + db] = src[i + sb]
                        }
                        if outStride == 4 { dst[o + 3] = 255 }
                    }
                }
            }
        }
    }

    static func requireSameSize(_ a: PixelBuffer, _ b: PixelBuffer, format: PixelFormat) throws(PixelBufferError) {
        guard b.format == format else { throw .unsupportedFormat(b.format, operation: "destination (needs \(format))") }
        guard a.width == b.width, a.height == b.height else {
            throw .sizeMismatch(expected: "\(a.width)x\(a.height)", actual: "\(b.width)x\(b.height)")
        }
    }
}
