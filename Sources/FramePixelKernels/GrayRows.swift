#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Gray = (9798·R + 19235·G + 3735·B + 16384) >> 15: the weights OpenCV 4 uses, so results
/// match it exactly (other weights and an offset give the luma of an RGB → Y'CbCr conversion). With SSE2, two `pmaddwd` (16-bit multiplies summed in pairs into 32 bits)
/// give four pixels' exact sums: for BGRA on each pixel's (B, R) and (G, A) halves, for RGB24
/// on the even and odd bytes of two-pixel groups (see `vectorRGB`).
///
/// This file is compiled twice: in FramePixelKernels for baseline x86-64 (SSE2), and through a
/// symlink in FramePixelKernelsAVX2 with `-target-cpu haswell` and `FRAMEKIT_AVX2`, where the
/// same sums run 32 pixels a step in 256-bit registers first. Both give the same bytes (the
/// arithmetic is exact); FramePixels' `KernelDispatch` picks one at start-up.
package enum GrayRows {
    /// (red·R + green·G + blue·B + bias) >> 15, each weight below 2^15 and the result at most
    /// 255: OpenCV's gray, or a Y'CbCr conversion's luma (its offset in the bias).
    package struct Weights: Sendable {
        package let red: Int32, green: Int32, blue: Int32, bias: Int32
        package init(red: Int32, green: Int32, blue: Int32, bias: Int32) {
            (self.red, self.green, self.blue, self.bias) = (red, green, blue, bias)
        }
        /// OpenCV 4's RGB → gray, rounded.
        package static let gray = Weights(red: 9798, green: 19235, blue: 3735, bias: 16384)
    }

    @inline(__always)
    static func value(r: UInt8, g: UInt8, b: UInt8, _ w: Weights) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int32(r) &* w.red &+ Int32(g) &* w.green &+ Int32(b) &* w.blue &+ w.bias) &>> 15)
    }

    /// One row of `width` pixels; `bgra` false means RGB24.
    package static func convertRow(
        _ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, width: Int, bgra: Bool, weights w: Weights = .gray
    ) {
        var x = 0
        #if FRAMEKIT_AVX2
        x = bgra ? wideBGRA(s, d, width, w) : wideRGB(s, d, width, w)
        #endif
        #if arch(x86_64)
        x += bgra ? vectorBGRA(s + 4 * x, d + x, width - x, w) : vectorRGB(s + 3 * x, d + x, width - x, w)
        #endif
        let stride = bgra ? 4 : 3
        let (ri, bi) = bgra ? (2, 0) : (0, 2)
        while x < width {
            let p = s + stride &* x
            d[x] = value(r: p[ri], g: p[1], b: p[bi], w)
            x += 1
        }
    }

    /// YUYV's luma, as it is (no range change, as OpenCV's YUV2GRAY_YUYV): the even bytes of
    /// the packed row, `width` of them.
    package static func lumaOfYUYV(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, width: Int) {
        var x = 0
        #if FRAMEKIT_AVX2
        x = wideLumaOfYUYV(s, d, width)
        #endif
        #if arch(x86_64)
        x += vectorLumaOfYUYV(s + 2 * x, d + x, width - x)
        #endif
        while x < width {
            d[x] = s[2 &* x]
            x += 1
        }
    }
}

#if arch(x86_64)
extension GrayRows {
    /// 16 gray bytes from four vectors of four 32-bit sums (rounding included): >> 15, packed.
    @inline(__always)
    static func pack16(_ s: (__m128i, __m128i, __m128i, __m128i)) -> __m128i {
        _mm_packus_epi16(
            _mm_packs_epi32(_mm_srli_epi32(s.0, 15), _mm_srli_epi32(s.1, 15)),
            _mm_packs_epi32(_mm_srli_epi32(s.2, 15), _mm_srli_epi32(s.3, 15)))
    }

    static func vectorBGRA(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        // Each pixel's (B, R) and (G, A) 16-bit halves against (blue, red) and (green, 0).
        let low = _mm_set1_epi32(0x00FF_00FF)
        let outer = _mm_set1_epi32(w.red << 16 | w.blue)
        let middle = _mm_set1_epi32(w.green)
        let rounding = _mm_set1_epi32(w.bias)
        var x = 0
        while x + 16 <= width {
            let p = UnsafeRawPointer(s + 4 * x)
            @inline(__always) func four(_ o: Int) -> __m128i {
                let q = _mm_loadu_si128(p.advanced(by: o).assumingMemoryBound(to: __m128i_u.self))
                let sides = _mm_madd_epi16(_mm_and_si128(q, low), outer)
                let green = _mm_madd_epi16(_mm_srli_epi16(q, 8), middle)
                return _mm_add_epi32(_mm_add_epi32(sides, green), rounding)
            }
            _mm_storeu_si128(
                UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m128i_u.self),
                pack16((four(0), four(16), four(32), four(48))))
            x += 16
        }
        return x
    }

    static func vectorRGB(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        // Two pixels per 64-bit lane: R0 G0 B0 R1 G1 B1 · ·. As 16-bit words, its even bytes are
        // (R0, B0, G1, ·) and, shifted up one byte, its odd ones (0, G0, R1, B1): weighted by
        // (red, blue, green, 0) and (0, green, red, blue), each pixel's three products land in
        // one 32-bit lane of one multiply-add or the other. No shuffling pixels into lanes.
        let lowBytes = _mm_set1_epi16(0x00FF)
        let rounding = _mm_set1_epi32(w.bias)
        let (r, g, b) = (Int16(w.red), Int16(w.green), Int16(w.blue))
        let evenWeights = _mm_set_epi16(0, g, b, r, 0, g, b, r)
        let oddWeights = _mm_set_epi16(b, r, g, 0, b, r, g, 0)
        var x = 0
        // Each 8-byte load holds two whole pixels; the last one reads 2 bytes past pixel x + 15.
        while x + 17 <= width {
            let p = UnsafeRawPointer(s + 3 * x)
            @inline(__always) func four(_ o: Int) -> __m128i {
                let q = _mm_unpacklo_epi64(
                    _mm_loadl_epi64(p.advanced(by: o).assumingMemoryBound(to: __m128i_u.self)),
                    _mm_loadl_epi64(p.advanced(by: o + 6).assumingMemoryBound(to: __m128i_u.self)))
                let even = _mm_madd_epi16(_mm_and_si128(q, lowBytes), evenWeights)
                let odd = _mm_madd_epi16(_mm_and_si128(_mm_slli_epi64(q, 8), lowBytes), oddWeights)
                return _mm_add_epi32(_mm_add_epi32(even, odd), rounding)
            }
            _mm_storeu_si128(
                UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m128i_u.self),
                pack16((four(0), four(12), four(24), four(36))))
            x += 16
        }
        return x
    }
}

extension GrayRows {
    /// 32 pixels a step, then 16: each 16-bit word's low byte (the luma) kept, two loads packed
    /// to bytes. (16 a step alone measured 9% slower than the loop the compiler made of this.)
    static func vectorLumaOfYUYV(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int) -> Int {
        let low = _mm_set1_epi16(0x00FF)
        let p = UnsafeRawPointer(s)
        @inline(__always) func sixteen(_ x: Int) {
            let a = _mm_loadu_si128(p.advanced(by: 2 &* x).assumingMemoryBound(to: __m128i_u.self))
            let b = _mm_loadu_si128(p.advanced(by: 2 &* x &+ 16).assumingMemoryBound(to: __m128i_u.self))
            _mm_storeu_si128(
                UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m128i_u.self),
                _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)))
        }
        var x = 0
        while x + 32 <= width {
            sixteen(x)
            sixteen(x &+ 16)
            x += 32
        }
        if x + 16 <= width {
            sixteen(x)
            x += 16
        }
        return x
    }
}
#endif

#if FRAMEKIT_AVX2
// AVX2 (Haswell and later): the SSE2 steps above on 256-bit registers, 32 pixels a step. The
// packs work within each 128-bit half, so the 4-byte groups come out as s0 s1 s2 s3 of the
// low half then of the high half; one dword permute restores pixel order.
extension GrayRows {
    @inline(__always)
    static func pack32(_ s: (__m256i, __m256i, __m256i, __m256i)) -> __m256i {
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)
        let words = (
            _mm256_packs_epi32(_mm256_srli_epi32(s.0, 15), _mm256_srli_epi32(s.1, 15)),
            _mm256_packs_epi32(_mm256_srli_epi32(s.2, 15), _mm256_srli_epi32(s.3, 15))
        )
        return _mm256_permutevar8x32_epi32(_mm256_packus_epi16(words.0, words.1), order)
    }

    /// 32 pixels a step.
    static func wideLumaOfYUYV(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int) -> Int {
        let low = _mm256_set1_epi16(0x00FF)
        let p = UnsafeRawPointer(s)
        return overlappedSteps(count: width, step: 32, reach: 32) { x in
            let a = _mm256_loadu_si256(p.advanced(by: 2 &* x).assumingMemoryBound(to: __m256i_u.self))
            let b = _mm256_loadu_si256(p.advanced(by: 2 &* x &+ 32).assumingMemoryBound(to: __m256i_u.self))
            storePacked(_mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low)), at: d + x)
        }
    }

    /// The AVX2 step's arithmetic on eight loaded pixels, for the steps below and for callers
    /// that have the pixels in a register already (the Y'CbCr encoder's chroma step). BGRA: a
    /// 32-byte load; each pixel's (B, R) and (G, A) 16-bit halves against (blue, red) and (green,
    /// 0). RGB24: two 16-byte loads 12 bytes apart (four pixels a 128-bit half); `vectorRGB`'s
    /// even and odd words — (R0, B0, G1, 0, R2, B2, G3, 0) and (0, G0, R1, B1, 0, G2, R3, B3) — each
    /// one byte shuffle of it. Eight 32-bit sums with the rounding, for `pack32`.
    struct WideSums {
        let bgra: Bool
        let low: __m256i, outer: __m256i, middle: __m256i, rounding: __m256i
        let evenBytes: __m256i, oddBytes: __m256i, evenWeights: __m256i, oddWeights: __m256i

        @inline(__always)
        init(_ w: Weights, bgra: Bool) {
            self.bgra = bgra
            rounding = _mm256_set1_epi32(w.bias)
            low = _mm256_set1_epi32(0x00FF_00FF)
            outer = _mm256_set1_epi32(w.red << 16 | w.blue)
            middle = _mm256_set1_epi32(w.green)
            let (r, g, b) = (Int16(w.red), Int16(w.green), Int16(w.blue))
            evenWeights = _mm256_setr_epi16(r, b, g, 0, r, b, g, 0, r, b, g, 0, r, b, g, 0)
            oddWeights = _mm256_setr_epi16(0, g, r, b, 0, g, r, b, 0, g, r, b, 0, g, r, b)
            let z: Int8 = -128
            evenBytes = _mm256_setr_epi8(
                0, z, 2, z, 4, z, z, z, 6, z, 8, z, 10, z, z, z, 0, z, 2, z, 4, z, z, z, 6, z, 8, z, 10, z, z, z)
            oddBytes = _mm256_setr_epi8(
                z, z, 1, z, 3, z, 5, z, z, z, 7, z, 9, z, 11, z, z, z, 1, z, 3, z, 5, z, z, z, 7, z, 9, z, 11, z)
        }

        /// Pixels x…x+7 of `row` as the step loads them.
        @inline(__always)
        func load(_ row: UnsafePointer<UInt8>, _ x: Int) -> __m256i {
            if bgra { return _mm256_loadu_si256(UnsafeRawPointer(row + 4 &* x).assumingMemoryBound(to: __m256i_u.self)) }
            let p = row + 3 &* x
            return _mm256_loadu2_m128i(UnsafePointer<__m128i_u>(OpaquePointer(p + 12)), UnsafePointer<__m128i_u>(OpaquePointer(p)))
        }

        @inline(__always)
        func eight(_ q: __m256i) -> __m256i {
            if bgra {
                let sides = _mm256_madd_epi16(_mm256_and_si256(q, low), outer)
                let green = _mm256_madd_epi16(_mm256_srli_epi16(q, 8), middle)
                return _mm256_add_epi32(_mm256_add_epi32(sides, green), rounding)
            }
            let even = _mm256_madd_epi16(_mm256_shuffle_epi8(q, evenBytes), evenWeights)
            let odd = _mm256_madd_epi16(_mm256_shuffle_epi8(q, oddBytes), oddWeights)
            return _mm256_add_epi32(_mm256_add_epi32(even, odd), rounding)
        }
    }

    static func wideBGRA(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        let sums = WideSums(w, bgra: true)
        return overlappedSteps(count: width, step: 32, reach: 32) { x in
            @inline(__always) func eight(_ o: Int) -> __m256i { sums.eight(sums.load(s, x &+ o)) }
            _mm256_storeu_si256(
                UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m256i_u.self), pack32((eight(0), eight(8), eight(16), eight(24))))
        }
    }

    static func wideRGB(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        let sums = WideSums(w, bgra: false)
        // A step's last load reads bytes up to 3x + 99: inside the row where x + 34 <= width.
        return overlappedSteps(count: width, step: 32, reach: 34) { x in
            @inline(__always) func eight(_ o: Int) -> __m256i { sums.eight(sums.load(s, x &+ o)) }
            _mm256_storeu_si256(
                UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m256i_u.self), pack32((eight(0), eight(8), eight(16), eight(24))))
        }
    }
}
#endif
