import FrameCore

/// Neighbourhood filters on 8-bit gray images, edges replicated (OpenCV's BORDER_REPLICATE).
public enum Filters {
    /// Kernel sizes the blurs take.
    public enum KernelSize: Int, Sendable, CaseIterable {
        case three = 3
        case five = 5
    }

    /// Mean of the k x k neighbourhood, rounded to nearest (as `cv::blur`).
    public static func boxBlur(_ source: PixelBuffer, into destination: inout PixelBuffer, size: KernelSize) throws(PixelBufferError) {
        try separable(source, into: &destination, size == .three ? .box3 : .box5)
    }

    /// Gaussian blur with OpenCV's fixed kernels for σ = 0: [1 2 1]/4 and [1 4 6 4 1]/16 per
    /// axis, rounded half up (as `cv::GaussianBlur`'s bit-exact 8-bit path).
    public static func gaussianBlur(_ source: PixelBuffer, into destination: inout PixelBuffer, size: KernelSize) throws(PixelBufferError) {
        try separable(source, into: &destination, size == .three ? .gaussian3 : .gaussian5)
    }

    /// |∂x| + |∂y| of the 3x3 Sobel operator, each saturated to 8 bits and their sum too
    /// (OpenCV's `convertScaleAbs(Sobel dx) + convertScaleAbs(Sobel dy)`).
    public static func sobelMagnitude(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width
        let h = source.height
        // Per source row, once: the horizontal difference and the horizontal [1 2 1] smoothing.
        var rows = [Int16](repeating: 0, count: 6 * w)
        var rowOf = [-1, -1, -1]
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                rows.withUnsafeMutableBufferPointer { ring in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    func prepare(_ y: Int) -> (UnsafePointer<Int16>, UnsafePointer<Int16>) {
                        let slot = y % 3
                        let difference = ring.baseAddress! + slot * 2 * w
                        let smooth = difference + w
                        if rowOf[slot] != y {
                            rowOf[slot] = y
                            KernelDispatch.sobelHorizontal(s + y * sp.bytesPerRow, difference: difference, smooth: smooth, width: w)
                        }
                        return (UnsafePointer(difference), UnsafePointer(smooth))
                    }
                    for y in 0..<h {
                        let up = prepare(max(0, y - 1))
                        let middle = prepare(y)
                        let down = prepare(min(h - 1, y + 1))
                        KernelDispatch.sobelMagnitude(up: up, middle: middle.0, down: down, into: d + y * dp.bytesPerRow, width: w)
                    }
                }
            }
        }
    }

    /// `maxValue` where the pixel is above `threshold`, else 0 (OpenCV's THRESH_BINARY).
    public static func threshold(_ source: PixelBuffer, into destination: inout PixelBuffer, threshold: UInt8, maxValue: UInt8 = 255)
        throws(PixelBufferError)
    {
        try requireGray(source, destination)
        PlaneRows.forEach(source, &destination) { s, d, w in
            KernelDispatch.threshold(s, d, count: w, threshold: threshold, maxValue: maxValue)
        }
    }

    /// Histogram equalisation, with OpenCV's `equalizeHist` mapping.
    public static func equalizeHistogram(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width
        let h = source.height
        // Four histograms, one per byte of each 32-bit word read: runs of equal pixels then
        // increment different counters instead of waiting on one another's store.
        var counts = [UInt32](repeating: 0, count: 4 * 256)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            counts.withUnsafeMutableBufferPointer { c in
                let c0 = c.baseAddress!
                let c1 = c0 + 256
                let c2 = c0 + 512
                let c3 = c0 + 768
                for y in 0..<h {
                    let row = src.baseAddress! + y * sp.bytesPerRow
                    var x = 0
                    while x &+ 4 <= w {
                        let v = row.loadUnaligned(fromByteOffset: x, as: UInt32.self)
                        c0[Int(v & 0xFF)] &+= 1
                        c1[Int((v &>> 8) & 0xFF)] &+= 1
                        c2[Int((v &>> 16) & 0xFF)] &+= 1
                        c3[Int(v &>> 24)] &+= 1
                        x &+= 4
                    }
                    while x < w {
                        c0[Int(row.load(fromByteOffset: x, as: UInt8.self))] &+= 1
                        x &+= 1
                    }
                }
            }
        }
        let histogram = (0..<256).map { Int(counts[$0]) + Int(counts[256 + $0]) + Int(counts[512 + $0]) + Int(counts[768 + $0]) }
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
        applyLUT(source, into: &destination, lut)
    }

    static func applyLUT(_ source: PixelBuffer, into destination: inout PixelBuffer, _ lut: [UInt8]) {
        lut.withUnsafeBufferPointer { table in
            PlaneRows.forEach(source, &destination) { s, d, w in
                // Eight pixels read and written as one 64-bit word.
                var x = 0
                while x &+ 8 <= w {
                    let v = UnsafeRawPointer(s).loadUnaligned(fromByteOffset: x, as: UInt64.self)
                    var out: UInt64 = 0
                    for k in stride(from: 0, to: 64, by: 8) { out |= UInt64(table[Int((v &>> UInt64(k)) & 0xFF)]) &<< UInt64(k) }
                    UnsafeMutableRawPointer(d).storeBytes(of: out, toByteOffset: x, as: UInt64.self)
                    x &+= 8
                }
                while x < w {
                    d[x] = table[Int(s[x])]
                    x &+= 1
                }
            }
        }
    }

    /// A separable blur, edges replicated: each source row's horizontal sums once, into a ring
    /// of as many rows as the kernel has taps, then each output row from those (`FilterRows`,
    /// in the kernel build that runs).
    static func separable(_ source: PixelBuffer, into destination: inout PixelBuffer, _ blur: KernelDispatch.Blur) throws(PixelBufferError)
    {
        try requireGray(source, destination)
        let w = source.width
        let h = source.height
        let taps = blur.taps
        var ring = [UInt16](repeating: 0, count: taps * w)
        var ringRow = [Int](repeating: -1, count: taps)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                ring.withUnsafeMutableBufferPointer { ringBuffer in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    func rowSums(_ y: Int) -> UnsafePointer<UInt16> {
                        let sy = min(h - 1, max(0, y))
                        let slot = sy % taps
                        let out = ringBuffer.baseAddress! + slot * w
                        if ringRow[slot] != sy {
                            ringRow[slot] = sy
                            KernelDispatch.blurHorizontal(blur, s + sy * sp.bytesPerRow, into: out, width: w)
                        }
                        return UnsafePointer(out)
                    }
                    for y in 0..<h {
                        let rows =
                            taps == 3
                            ? (rowSums(y - 1), rowSums(y), rowSums(y + 1), rowSums(y), rowSums(y))
                            : (rowSums(y - 2), rowSums(y - 1), rowSums(y), rowSums(y + 1), rowSums(y + 2))
                        KernelDispatch.blurVertical(blur, rows, into: d + y * dp.bytesPerRow, width: w)
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
