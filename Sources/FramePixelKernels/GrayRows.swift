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

    /// The AVX2 step's arithmetic, for the steps below and for callers that have the pixels in
    /// registers already (the Y'CbCr encoder's chroma step): eight pixels a load — BGRA a 32-byte
    /// load, RGB24 two 16-byte loads 12 bytes apart (four pixels a 128-bit half) — then 16 pixels'
    /// luma as 16-bit words from two loads (`sixteen`), then 32 bytes from two of those (`bytes`).
    ///
    /// Two ways to the same integers. Weights that are all multiples of 128 (weights in 256ths,
    /// as the Y'CbCr encoder takes them where they stay within its error bound) go as bytes:
    /// (Σ w·p + bias) >> 15 is then (Σ (w/128)·p + bias/128) >> 8, and with each pixel's bytes
    /// made signed (p − 128, a sign flip) one `pmaddubsw` by the weights gives each pixel's sum in
    /// two words, one `phaddw` adds them, and 128·Σ(w/128) goes back into the constant: four
    /// instructions per eight pixels where the 32-bit sums take six and a pack. Other weights
    /// (OpenCV's gray) go through `pmaddwd`: BGRA as each pixel's (B, R) and (G, A) halves against
    /// (blue, red) and (green, 0); RGB24 as `vectorRGB`'s even and odd words — (R0, B0, G1, 0, R2,
    /// B2, G3, 0) and (0, G0, R1, B1, 0, G2, R3, B3) — each one byte shuffle of the load.
    struct WideSums {
        let bgra: Bool, inBytes: Bool
        let low: __m256i, outer: __m256i, middle: __m256i, rounding: __m256i
        let evenBytes: __m256i, oddBytes: __m256i, evenWeights: __m256i, oddWeights: __m256i
        let byteWeights: __m256i, pixelBytes: __m256i, signs: __m256i, constant: __m256i

        /// Whether `w` can go as bytes: every weight and the bias non-negative multiples of 128,
        /// each weight a byte (≤ 255 × 128), Σ w ≤ 256 × 128, and the whole sum within an
        /// unsigned word.
        static func bytesFit(_ w: Weights) -> Bool {
            let sum = (w.red + w.green + w.blue) >> 7
            return [w.red, w.green, w.blue, w.bias].allSatisfy { $0 & 127 == 0 && $0 >= 0 }
                && [w.red, w.green, w.blue].allSatisfy { $0 >> 7 <= 255 } && sum <= 256 && 255 * sum + w.bias >> 7 < 65536
        }

        /// `inBytes`: `bytesFit(w)`, given by the caller so that it is a constant of the loop it
        /// builds (each loop then has one arithmetic, untested per step).
        @inline(__always)
        init(_ w: Weights, bgra: Bool, inBytes: Bool) {
            self.bgra = bgra
            self.inBytes = inBytes
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
            // Bytes: each pixel as (B, G, R, ·) — BGRA as it is, RGB24 by a shuffle — against
            // (blue, green, red, 0)/128. A pair's sum is at most 128 · (blue + green)/128 ≤ 2^15
            // and a pixel's 128 · Σ ≤ 2^15 (Σ ≤ 256): no word saturates or wraps.
            let (rb, gb, bb) = (w.red >> 7, w.green >> 7, w.blue >> 7)
            let weightBytes = Int32(bb) | Int32(gb) << 8 | Int32(rb) << 16
            byteWeights = _mm256_set1_epi32(weightBytes)
            pixelBytes = _mm256_setr_epi8(
                2, 1, 0, z, 5, 4, 3, z, 8, 7, 6, z, 11, 10, 9, z, 2, 1, 0, z, 5, 4, 3, z, 8, 7, 6, z, 11, 10, 9, z)
            signs = _mm256_set1_epi8(-128)
            // Σ w·p + bias = Σ w·(p − 128) + 128·Σ w + bias, all /128; kept modulo 2^16, as the
            // whole sum fits an unsigned word (`bytesFit`).
            constant = _mm256_set1_epi16(Int16(truncatingIfNeeded: 128 &* (rb &+ gb &+ bb) &+ w.bias >> 7))
        }

        /// Pixels x…x+7 of `row` as the step loads them.
        @inline(__always)
        func load(_ row: UnsafePointer<UInt8>, _ x: Int) -> __m256i {
            if bgra { return _mm256_loadu_si256(UnsafeRawPointer(row + 4 &* x).assumingMemoryBound(to: __m256i_u.self)) }
            let p = row + 3 &* x
            return _mm256_loadu2_m128i(UnsafePointer<__m128i_u>(OpaquePointer(p + 12)), UnsafePointer<__m128i_u>(OpaquePointer(p)))
        }

        /// Eight 32-bit sums with the rounding, >> 15 (the `pmaddwd` way).
        @inline(__always)
        func eight(_ q: __m256i) -> __m256i {
            if bgra {
                let sides = _mm256_madd_epi16(_mm256_and_si256(q, low), outer)
                let green = _mm256_madd_epi16(_mm256_srli_epi16(q, 8), middle)
                return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(sides, green), rounding), 15)
            }
            let even = _mm256_madd_epi16(_mm256_shuffle_epi8(q, evenBytes), evenWeights)
            let odd = _mm256_madd_epi16(_mm256_shuffle_epi8(q, oddBytes), oddWeights)
            return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(even, odd), rounding), 15)
        }

        /// Two loads' 16 luma values as words, per 128-bit half the first load's four then the
        /// second's (the order `bytes` undoes).
        @inline(__always)
        func sixteen(_ a: __m256i, _ b: __m256i) -> __m256i {
            guard inBytes else { return _mm256_packs_epi32(eight(a), eight(b)) }
            @inline(__always) func pairs(_ q: __m256i) -> __m256i {
                let pixels = bgra ? q : _mm256_shuffle_epi8(q, pixelBytes)
                return _mm256_maddubs_epi16(byteWeights, _mm256_xor_si256(pixels, signs))
            }
            return _mm256_srli_epi16(_mm256_add_epi16(_mm256_hadd_epi16(pairs(a), pairs(b)), constant), 8)
        }

        /// 32 luma bytes in order from loads 0–1's and 2–3's `sixteen`.
        @inline(__always)
        func bytes(_ first: __m256i, _ second: __m256i) -> __m256i {
            _mm256_permutevar8x32_epi32(_mm256_packus_epi16(first, second), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7))
        }

        /// Pixels x…x+31 of `row` → `out`.
        @inline(__always)
        func thirtyTwo(_ row: UnsafePointer<UInt8>, _ x: Int, into out: UnsafeMutablePointer<UInt8>) {
            let luma = bytes(sixteen(load(row, x), load(row, x &+ 8)), sixteen(load(row, x &+ 16), load(row, x &+ 24)))
            _mm256_storeu_si256(UnsafeMutableRawPointer(out).assumingMemoryBound(to: __m256i_u.self), luma)
        }
    }

    static func wideBGRA(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        @inline(__always) func steps(_ sums: WideSums) -> Int {
            overlappedSteps(count: width, step: 32, reach: 32) { x in sums.thirtyTwo(s, x, into: d + x) }
        }
        return WideSums.bytesFit(w) ? steps(WideSums(w, bgra: true, inBytes: true)) : steps(WideSums(w, bgra: true, inBytes: false))
    }

    static func wideRGB(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int, _ w: Weights) -> Int {
        // A step's last load reads bytes up to 3x + 99: inside the row where x + 34 <= width.
        @inline(__always) func steps(_ sums: WideSums) -> Int {
            overlappedSteps(count: width, step: 32, reach: 34) { x in sums.thirtyTwo(s, x, into: d + x) }
        }
        return WideSums.bytesFit(w) ? steps(WideSums(w, bgra: false, inBytes: true)) : steps(WideSums(w, bgra: false, inBytes: false))
    }
}
#endif
