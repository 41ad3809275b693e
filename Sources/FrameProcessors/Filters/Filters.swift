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
        // (sum + area/2) / area as a multiply and shift, exact for every possible sum.
        if size == .three {
            // Sums fit 16 bits (≤ 9·255 + 4), and the multiply's high half is exact for all of them.
            try separable3(
                source, into: &destination, as: UInt16.self, horizontal: { a, b, c in a &+ b &+ c },
                vertical: { a, b, c in
                    UInt16(truncatingIfNeeded: (UInt32(a &+ b &+ c &+ 4) &* 7282) &>> 16)
                })
        } else {
            // Sums fit 16 bits (≤ 25·255 + 12), and so does the division by 25 if a high-half multiply's
            // estimate (exact or one too many over this range, checked for every sum) is corrected:
            // twice the lanes of a 32-bit multiply, which SSE2 does not even have.
            try separable5(
                source, into: &destination, as: UInt16.self, horizontal: { $0 &+ $1 &+ $2 &+ $3 &+ $4 },
                vertical: { a, b, c, d, e in
                    let n = a &+ b &+ c &+ d &+ e &+ 12
                    let q = UInt16(truncatingIfNeeded: (UInt32(n) &* 2622) &>> 16)
                    return q &* 25 > n ? q &- 1 : q
                })
        }
    }

    /// Gaussian blur with OpenCV's fixed kernels for σ = 0: [1 2 1]/4 and [1 4 6 4 1]/16 per
    /// axis, rounded half up (as `cv::GaussianBlur`'s bit-exact 8-bit path).
    public static func gaussianBlur(_ source: PixelBuffer, into destination: inout PixelBuffer, size: KernelSize) throws(PixelBufferError) {
        if size == .three {
            // Sums stay below 2^16 (at most 16·255 + 8): 16-bit lanes, twice as many per vector.
            try separable3(
                source, into: &destination, as: UInt16.self, horizontal: { a, b, c in a &+ 2 &* b &+ c },
                vertical: { a, b, c in
                    (a &+ 2 &* b &+ c &+ 8) &>> 4
                })
        } else {
            // Sums stay below 2^16 (at most 256·255 + 128): 16-bit lanes.
            try separable5(
                source, into: &destination, as: UInt16.self, horizontal: { $0 &+ 4 &* $1 &+ 6 &* $2 &+ 4 &* $3 &+ $4 },
                vertical: { a, b, c, d, e in (a &+ 4 &* b &+ 6 &* c &+ 4 &* d &+ e &+ 128) &>> 8 })
        }
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
                    func prepare(_ y: Int) -> (diff: UnsafeMutablePointer<Int16>, smooth: UnsafeMutablePointer<Int16>) {
                        let slot = y % 3
                        let diff = ring.baseAddress! + slot * 2 * w
                        let smooth = diff + w
                        if rowOf[slot] == y { return (diff, smooth) }
                        rowOf[slot] = y
                        let p = s + y * sp.bytesPerRow
                        if w == 1 {
                            diff[0] = 0
                            smooth[0] = 4 &* Int16(p[0])
                            return (diff, smooth)
                        }
                        diff[0] = Int16(p[1]) &- Int16(p[0])
                        smooth[0] = 3 &* Int16(p[0]) &+ Int16(p[1])
                        for x in 1..<(w - 1) {
                            let l = Int16(p[x &- 1])
                            let c = Int16(p[x])
                            let r = Int16(p[x &+ 1])
                            diff[x] = r &- l
                            smooth[x] = l &+ 2 &* c &+ r
                        }
                        diff[w - 1] = Int16(p[w - 1]) &- Int16(p[w - 2])
                        smooth[w - 1] = Int16(p[w - 2]) &+ 3 &* Int16(p[w - 1])
                        return (diff, smooth)
                    }
                    for y in 0..<h {
                        let up = prepare(max(0, y - 1))
                        let mid = prepare(y)
                        let down = prepare(min(h - 1, y + 1))
                        let out = d + y * dp.bytesPerRow
                        for x in 0..<w {
                            let dx = up.diff[x] &+ 2 &* mid.diff[x] &+ down.diff[x]
                            let dy = down.smooth[x] &- up.smooth[x]
                            let ax = min(255, dx < 0 ? 0 &- dx : dx)
                            let ay = min(255, dy < 0 ? 0 &- dy : dy)
                            out[x] = UInt8(truncatingIfNeeded: min(255, ax &+ ay))
                        }
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
        // Unsigned v > t as a signed compare of both with the top bit flipped (one pcmpgtb), whose
        // all-ones lanes are the answer itself when maxValue is 255.
        let flip = SIMD16<UInt8>(repeating: 0x80)
        let limit = SIMD16<Int8>(repeating: Int8(bitPattern: threshold ^ 0x80))
        let high = SIMD16<UInt8>(repeating: maxValue)
        PlaneRows.forEach(source, &destination) { s, d, w in
            @inline(__always) func sixteen(_ x: Int) {
                let v = UnsafeRawPointer(s + x).loadUnaligned(as: SIMD16<UInt8>.self)
                let above = unsafeBitCast(unsafeBitCast(v ^ flip, to: SIMD16<Int8>.self) .> limit, to: SIMD16<UInt8>.self)
                UnsafeMutableRawPointer(d + x).storeBytes(of: maxValue == 255 ? above : above & high, as: SIMD16<UInt8>.self)
            }
            var x = 0
            // Four vectors a step: the loop's own bookkeeping costs as much as one vector's work.
            while x &+ 64 <= w {
                sixteen(x)
                sixteen(x &+ 16)
                sixteen(x &+ 32)
                sixteen(x &+ 48)
                x &+= 64
            }
            while x &+ 16 <= w {
                sixteen(x)
                x &+= 16
            }
            while x < w {
                d[x] = s[x] > threshold ? maxValue : 0
                x &+= 1
            }
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

    /// A separable 3-tap filter, edges replicated: the 3-tap twin of ``separable5(_:into:as:horizontal:vertical:)``
    /// with 3-argument closures (one generic 5-argument form did not vectorise the 3-tap loops:
    /// measured 3.0 vs 0.6 ns/px).
    @inline(__always)
    static func separable3<T: FixedWidthInteger & UnsignedInteger>(
        _ source: PixelBuffer, into destination: inout PixelBuffer, as _: T.Type,
        horizontal: (T, T, T) -> T, vertical: (T, T, T) -> T
    ) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width
        let h = source.height
        var ring = [T](repeating: 0, count: 3 * w)
        var ringRow = [-1, -1, -1]
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                ring.withUnsafeMutableBufferPointer { ringBuffer in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    func rowSums(_ sy: Int) -> UnsafeMutablePointer<T> {
                        let slot = sy % 3
                        let out = ringBuffer.baseAddress! + slot * w
                        if ringRow[slot] == sy { return out }
                        ringRow[slot] = sy
                        let p = s + sy * sp.bytesPerRow
                        if w == 1 {
                            out[0] = horizontal(T(p[0]), T(p[0]), T(p[0]))
                            return out
                        }
                        out[0] = horizontal(T(p[0]), T(p[0]), T(p[1]))
                        for x in 1..<max(1, w - 1) { out[x] = horizontal(T(p[x &- 1]), T(p[x]), T(p[x &+ 1])) }
                        out[w - 1] = horizontal(T(p[w - 2]), T(p[w - 1]), T(p[w - 1]))
                        return out
                    }
                    for y in 0..<h {
                        let a = rowSums(max(0, y - 1))
                        let b = rowSums(y)
                        let c = rowSums(min(h - 1, y + 1))
                        let out = d + y * dp.bytesPerRow
                        for x in 0..<w { out[x] = UInt8(truncatingIfNeeded: vertical(a[x], b[x], c[x])) }
                    }
                }
            }
        }
    }

    /// A separable 5-tap filter, edges replicated. `horizontal` combines the taps of one source
    /// row (computed once per row into a ring of five rows); `vertical` combines those rows into
    /// the output value. Both are inlined into tight loops the compiler vectorises.
    @inline(__always)
    static func separable5<T: FixedWidthInteger & UnsignedInteger>(
        _ source: PixelBuffer, into destination: inout PixelBuffer, as _: T.Type,
        horizontal: (T, T, T, T, T) -> T, vertical: (T, T, T, T, T) -> T
    ) throws(PixelBufferError) {
        try requireGray(source, destination)
        let w = source.width
        let h = source.height
        var ring = [T](repeating: 0, count: 5 * w)
        var ringRow = [Int](repeating: -1, count: 5)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                ring.withUnsafeMutableBufferPointer { ringBuffer in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    func rowSums(_ sy: Int) -> UnsafeMutablePointer<T> {
                        let slot = sy % 5
                        let out = ringBuffer.baseAddress! + slot * w
                        if ringRow[slot] == sy { return out }
                        ringRow[slot] = sy
                        let p = s + sy * sp.bytesPerRow
                        @inline(__always) func px(_ x: Int) -> T { T(p[min(w - 1, max(0, x))]) }
                        @inline(__always) func edge(_ x: Int) -> T { horizontal(px(x - 2), px(x - 1), px(x), px(x + 1), px(x + 2)) }
                        for x in 0..<min(2, w) { out[x] = edge(x) }
                        for x in 2..<max(2, w - 2) { out[x] = horizontal(T(p[x &- 2]), T(p[x &- 1]), T(p[x]), T(p[x &+ 1]), T(p[x &+ 2])) }
                        for x in max(min(2, w), w - 2)..<w { out[x] = edge(x) } // w = 1: the first loop did it all
                        return out
                    }
                    for y in 0..<h {
                        let out = d + y * dp.bytesPerRow
                        let a = rowSums(max(0, y - 2))
                        let b = rowSums(max(0, y - 1))
                        let c = rowSums(y)
                        let e = rowSums(min(h - 1, y + 1))
                        let f = rowSums(min(h - 1, y + 2))
                        for x in 0..<w { out[x] = UInt8(truncatingIfNeeded: vertical(a[x], b[x], c[x], e[x], f[x])) }
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
