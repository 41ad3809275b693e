#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The row passes of FrameProcessors' neighbourhood filters (edges replicated, as OpenCV's
/// BORDER_REPLICATE): portable loops in wrapping 16-bit arithmetic that the compiler vectorises —
/// with SSE2 in the baseline build and on 256-bit registers in the AVX2 build, from this one
/// source. Every path computes the same integers.
package enum FilterRows {
    /// The separable blurs: box (mean, rounded to nearest, as `cv::blur`) and OpenCV's fixed
    /// Gaussian kernels for σ = 0 ([1 2 1]/4, [1 4 6 4 1]/16 per axis, rounded half up).
    package enum Blur: Sendable {
        case box3, box5, gaussian3, gaussian5

        /// Rows each output row reads (3 or 5).
        package var taps: Int {
            switch self {
            case .box3, .gaussian3: 3
            case .box5, .gaussian5: 5
            }
        }
    }

    /// One source row's horizontal sums (at most 16·255 for every kernel: 16 bits).
    package static func horizontal(_ blur: Blur, _ p: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt16>, width w: Int) {
        switch blur {
        case .box3: pass3(p, out, w) { a, b, c in a &+ b &+ c }
        case .gaussian3: pass3(p, out, w) { a, b, c in a &+ 2 &* b &+ c }
        case .box5: pass5(p, out, w) { $0 &+ $1 &+ $2 &+ $3 &+ $4 }
        case .gaussian5: pass5(p, out, w) { $0 &+ 4 &* $1 &+ 6 &* $2 &+ 4 &* $3 &+ $4 }
        }
    }

    /// One output row from `blur.taps` rows of horizontal sums (`rows[k]`: the row k − taps/2
    /// away, edges already replicated by the caller).
    package static func vertical(
        _ blur: Blur,
        _ rows: (UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>),
        into out: UnsafeMutablePointer<UInt8>, width w: Int
    ) {
        let (a, b, c, d, e) = rows
        switch blur {
        case .box3:
            // (sum + 4) / 9 as a multiply's high half: exact for every sum up to 9·255.
            for x in 0..<w { out[x] = UInt8(truncatingIfNeeded: (UInt32(a[x] &+ b[x] &+ c[x] &+ 4) &* 7282) &>> 16) }
        case .gaussian3:
            for x in 0..<w { out[x] = UInt8(truncatingIfNeeded: (a[x] &+ 2 &* b[x] &+ c[x] &+ 8) &>> 4) }
        case .box5:
            // (sum + 12) / 25: a high-half multiply's estimate is exact or one too many over this
            // range (checked for every sum), so it is corrected — 16-bit lanes throughout.
            for x in 0..<w {
                let n = a[x] &+ b[x] &+ c[x] &+ d[x] &+ e[x] &+ 12
                let q = UInt16(truncatingIfNeeded: (UInt32(n) &* 2622) &>> 16)
                out[x] = UInt8(truncatingIfNeeded: q &* 25 > n ? q &- 1 : q)
            }
        case .gaussian5:
            for x in 0..<w { out[x] = UInt8(truncatingIfNeeded: (a[x] &+ 4 &* b[x] &+ 6 &* c[x] &+ 4 &* d[x] &+ e[x] &+ 128) &>> 8) }
        }
    }

    @inline(__always)
    static func pass3(_ p: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt16>, _ w: Int, _ f: (UInt16, UInt16, UInt16) -> UInt16) {
        if w == 1 {
            out[0] = f(UInt16(p[0]), UInt16(p[0]), UInt16(p[0]))
            return
        }
        out[0] = f(UInt16(p[0]), UInt16(p[0]), UInt16(p[1]))
        for x in 1..<max(1, w - 1) { out[x] = f(UInt16(p[x &- 1]), UInt16(p[x]), UInt16(p[x &+ 1])) }
        out[w - 1] = f(UInt16(p[w - 2]), UInt16(p[w - 1]), UInt16(p[w - 1]))
    }

    @inline(__always)
    static func pass5(
        _ p: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt16>, _ w: Int, _ f: (UInt16, UInt16, UInt16, UInt16, UInt16) -> UInt16
    ) {
        @inline(__always) func px(_ x: Int) -> UInt16 { UInt16(p[min(w - 1, max(0, x))]) }
        @inline(__always) func edge(_ x: Int) -> UInt16 { f(px(x - 2), px(x - 1), px(x), px(x + 1), px(x + 2)) }
        for x in 0..<min(2, w) { out[x] = edge(x) }
        for x in 2..<max(2, w - 2) {
            out[x] = f(UInt16(p[x &- 2]), UInt16(p[x &- 1]), UInt16(p[x]), UInt16(p[x &+ 1]), UInt16(p[x &+ 2]))
        }
        for x in max(min(2, w), w - 2)..<w { out[x] = edge(x) } // w = 1: the first loop did it all
    }

    /// Sobel's horizontal pass of one source row: the difference `r − l` and the smoothing
    /// `l + 2c + r`, edges replicated.
    package static func sobelHorizontal(
        _ p: UnsafePointer<UInt8>, difference: UnsafeMutablePointer<Int16>, smooth: UnsafeMutablePointer<Int16>, width w: Int
    ) {
        if w == 1 {
            difference[0] = 0
            smooth[0] = 4 &* Int16(p[0])
            return
        }
        difference[0] = Int16(p[1]) &- Int16(p[0])
        smooth[0] = 3 &* Int16(p[0]) &+ Int16(p[1])
        for x in 1..<(w - 1) {
            let l = Int16(p[x &- 1])
            let c = Int16(p[x])
            let r = Int16(p[x &+ 1])
            difference[x] = r &- l
            smooth[x] = l &+ 2 &* c &+ r
        }
        difference[w - 1] = Int16(p[w - 1]) &- Int16(p[w - 2])
        smooth[w - 1] = Int16(p[w - 2]) &+ 3 &* Int16(p[w - 1])
    }

    /// |∂x| + |∂y| from three rows' horizontal passes (up, middle, down), each saturated to
    /// 8 bits and their sum too (OpenCV's `convertScaleAbs(dx) + convertScaleAbs(dy)`).
    package static func sobelMagnitude(
        up: (UnsafePointer<Int16>, UnsafePointer<Int16>), middle: UnsafePointer<Int16>, down: (UnsafePointer<Int16>, UnsafePointer<Int16>),
        into out: UnsafeMutablePointer<UInt8>, width w: Int
    ) {
        for x in 0..<w {
            let dx = up.0[x] &+ 2 &* middle[x] &+ down.0[x]
            let dy = down.1[x] &- up.1[x]
            let ax = min(255, dx < 0 ? 0 &- dx : dx)
            let ay = min(255, dy < 0 ? 0 &- dy : dy)
            out[x] = UInt8(truncatingIfNeeded: min(255, ax &+ ay))
        }
    }

    /// `maxValue` where the byte is above `threshold`, else 0 (OpenCV's THRESH_BINARY): unsigned
    /// v > t as a signed compare of both with the top bit flipped, whose all-ones lanes are the
    /// answer itself when `maxValue` is 255.
    package static func threshold(
        _ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, count w: Int, threshold: UInt8, maxValue: UInt8
    ) {
        var x = 0
        #if FRAMEKIT_AVX2
        // (`SIMD32<UInt8>`'s operators compiled to lane-by-lane loops here: intrinsics instead.)
        do {
            let flip = _mm256_set1_epi8(-128)
            let limit = _mm256_set1_epi8(Int8(bitPattern: threshold ^ 0x80))
            let high = _mm256_set1_epi8(Int8(bitPattern: maxValue))
            @inline(__always) func one(_ x: Int) {
                let v = _mm256_loadu_si256(UnsafeRawPointer(s + x).assumingMemoryBound(to: __m256i_u.self))
                let above = _mm256_cmpgt_epi8(_mm256_xor_si256(v, flip), limit)
                _mm256_storeu_si256(
                    UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m256i_u.self),
                    maxValue == 255 ? above : _mm256_and_si256(above, high))
            }
            x = vectorSteps(from: 0, to: w, by: 32, one)
        }
        #endif
        let flip = SIMD16<UInt8>(repeating: 0x80)
        let limit = SIMD16<Int8>(repeating: Int8(bitPattern: threshold ^ 0x80))
        let high = SIMD16<UInt8>(repeating: maxValue)
        @inline(__always) func one(_ x: Int) {
            let v = UnsafeRawPointer(s + x).loadUnaligned(as: SIMD16<UInt8>.self)
            let above = unsafeBitCast(unsafeBitCast(v ^ flip, to: SIMD16<Int8>.self) .> limit, to: SIMD16<UInt8>.self)
            UnsafeMutableRawPointer(d + x).storeBytes(of: maxValue == 255 ? above : above & high, as: SIMD16<UInt8>.self)
        }
        x = vectorSteps(from: x, to: w, by: 16, one)
        while x < w {
            d[x] = s[x] > threshold ? maxValue : 0
            x &+= 1
        }
    }
}
