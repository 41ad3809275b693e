import FrameCore

/// Neighbourhood filters on 8-bit gray images, edges replicated (OpenCV's BORDER_REPLICATE).
public enum Filters {
    /// Kernel sizes the blurs take.
    public enum KernelSize: Int, Sendable, CaseIterable { case three = 3, five = 5 }

    /// Mean of the k x k neighbourhood, rounded to nearest (as `cv::blur`).
    public static func boxBlur(_ source: PixelBuffer, into destination: inout PixelBuffer, size: KernelSize) throws(PixelBufferError) {
        let weights: [UInt32] = size == .three ? [1, 1, 1] : [1, 1, 1, 1, 1]
        let area = UInt32(size.rawValue * size.rawValue)
        try separable(source, into: &destination, weights: weights) { sum in (sum &+ area / 2) / area }
    }

    /// Gaussian blur with OpenCV's fixed kernels for σ = 0: [1 2 1]/4 and [1 4 6 4 1]/16 per
    /// axis, rounded half up (as `cv::GaussianBlur`'s bit-exact 8-bit path).
    public static func gaussianBlur(_ source: PixelBuffer, into destination: inout PixelBuffer, size: KernelSize) throws(PixelBufferError) {
        if size == .three {
            try separable(source, into: &destination, weights: [1, 2, 1]) { ($0 &+ 8) &>> 4 }
        } else {
            try separable(source, into: &destination, weights: [1, 4, 6, 4, 1]) { ($0 &+ 128) &>> 8 }
        }
    }

    /// |∂x| + |∂y| of the 3x3 Sobel operator, each saturated to 8 bits and their sum too
    /// (OpenCV's `convertScaleAbs(Sobel dx) + convertScaleAbs(Sobel dy)`).
    public static func sobelMagnitude(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width, h = source.height
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for y in 0..<h {
                    let up = s + max(0, y - 1) * sp.bytesPerRow, mid = s + y * sp.bytesPerRow
                    let down = s + min(h - 1, y + 1) * sp.bytesPerRow
                    let out = d + y * dp.bytesPerRow
                    for x in 0..<w {
                        let l = max(0, x - 1), r = min(w - 1, x + 1)
                        let dx = (Int32(up[r]) &+ 2 &* Int32(mid[r]) &+ Int32(down[r])) &- (Int32(up[l]) &+ 2 &* Int32(mid[l]) &+ Int32(down[l]))
                        let dy = (Int32(down[l]) &+ 2 &* Int32(down[x]) &+ Int32(down[r])) &- (Int32(up[l]) &+ 2 &* Int32(up[x]) &+ Int32(up[r]))
                        out[x] = UInt8(clamping: min(255, abs(dx)) &+ min(255, abs(dy)))
                    }
                }
            }
        }
    }

    /// `maxValue` where the pixel is above `threshold`, else 0 (OpenCV's THRESH_BINARY).
    public static func threshold(_ source: PixelBuffer, into destination: inout PixelBuffer, threshold: UInt8, maxValue: UInt8 = 255) throws(PixelBufferError) {
        try requireGray(source, destination)
        var lut = [UInt8](repeating: 0, count: 256)
        for v in Int(threshold) + 1..<256 where threshold < 255 { lut[v] = maxValue }
        try applyLUT(source, into: &destination, lut)
    }

    /// Histogram equalisation, with OpenCV's `equalizeHist` mapping.
    public static func equalizeHistogram(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireGray(source, destination)
        var histogram = [Int](repeating: 0, count: 256)
        let w = source.width, h = source.height
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            for y in 0..<h {
                let row = src.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * sp.bytesPerRow
                for x in 0..<w { histogram[Int(row[x])] &+= 1 }
            }
        }
        var lut = [UInt8](repeating: 0, count: 256)
        var i = 0
        while histogram[i] == 0 { i += 1 }
        let total = w * h
        if histogram[i] == total {
            lut = [UInt8](repeating: UInt8(i), count: 256)
        } else {
            let scale = Float(255) / Float(total - histogram[i])
            var sum = 0
            lut[i] = 0
            i += 1
            while i < 256 {
                sum += histogram[i]
                lut[i] = UInt8(clamping: Int((Float(sum) * scale).rounded(.toNearestOrEven)))
                i += 1
            }
        }
        try applyLUT(source, into: &destination, lut)
    }

    static func applyLUT(_ source: PixelBuffer, into destination: inout PixelBuffer, _ lut: [UInt8]) throws(PixelBufferError) {
        let w = source.width, h = source.height
        lut.withUnsafeBufferPointer { table in
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                    for y in 0..<h {
                        let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * sp.bytesPerRow
                        let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * dp.bytesPerRow
                        for x in 0..<w { d[x] = table[Int(s[x])] }
                    }
                }
            }
        }
    }

    /// A separable filter with integer `weights` on both axes; `finish` turns the 2-D weighted
    /// sum into the output value. Rows are summed into a 32-bit scratch row, then columns.
    static func separable(_ source: PixelBuffer, into destination: inout PixelBuffer, weights: [UInt32],
                          finish: (UInt32) -> UInt32) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width, h = source.height, r = weights.count / 2
        // Horizontal pass for every source row once, kept in a ring of 2r+1 rows.
        var ring = [UInt32](repeating: 0, count: (2 * r + 1) * w)
        var ringRow = [Int](repeating: -1, count: 2 * r + 1)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                ring.withUnsafeMutableBufferPointer { ringBuffer in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    func horizontal(_ sy: Int) -> UnsafeMutablePointer<UInt32> {
                        let slot = sy % (2 * r + 1)
                        let out = ringBuffer.baseAddress! + slot * w
                        if ringRow[slot] == sy { return out }
                        ringRow[slot] = sy
                        let row = s + sy * sp.bytesPerRow
                        for x in 0..<w {
                            var acc: UInt32 = 0
                            for k in 0..<weights.count {
                                let xx = min(w - 1, max(0, x + k - r))
                                acc &+= weights[k] &* UInt32(row[xx])
                            }
                            out[x] = acc
                        }
                        return out
                    }
                    var rows = [UnsafeMutablePointer<UInt32>](repeating: ringBuffer.baseAddress!, count: weights.count)
                    for y in 0..<h {
                        for k in 0..<weights.count { rows[k] = horizontal(min(h - 1, max(0, y + k - r))) }
                        let out = d + y * dp.bytesPerRow
                        for x in 0..<w {
                            var acc: UInt32 = 0
                            for k in 0..<weights.count { acc &+= weights[k] &* rows[k][x] }
                            out[x] = UInt8(truncatingIfNeeded: min(255, finish(acc)))
                        }
                    }
                }
            }
        }
    }

    static func requireGray(_ source: PixelBuffer, _ destination: PixelBuffer) throws(PixelBufferError) {
        guard source.format == .gray8 else { throw .unsupportedFormat(source.format, operation: "this filter (gray8 input)") }
        guard destination.format == .gray8 else { throw .unsupportedFormat(destination.format, operation: "this filter (gray8 output)") }
        guard source.width == destination.width, source.height == destination.height else {
            throw .sizeMismatch(expected: "\(source.width)x\(source.height)", actual: "\(destination.width)x\(destination.height)")
        }
    }
}

