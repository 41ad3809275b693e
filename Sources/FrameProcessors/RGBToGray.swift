import FrameCore
#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Gray = (9798·R + 19235·G + 3735·B + 16384) >> 15: the weights OpenCV 4 uses, so results
/// match it exactly. With SSE2 each pixel becomes one 32-bit lane (B|G|R|x for BGRA, R|G|B|x
/// for RGB24, two 3-byte pixels per 64-bit half), and two `pmaddwd` sum its (R, B) and (G, ·)
/// 16-bit halves against their weights: the exact 32-bit sums, four pixels per instruction.
/// RGB24 stays ~1.2x OpenCV's time: without a byte shuffle (SSSE3) placing 3-byte pixels in
/// 32-bit lanes costs 7 instructions per 4 pixels (docs/performance.md).
enum RGBToGray {
    static let red: Int32 = 9798, green: Int32 = 19235, blue: Int32 = 3735

    @inline(__always)
    static func gray(r: UInt8, g: UInt8, b: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int32(r) &* red &+ Int32(g) &* green &+ Int32(b) &* blue &+ 16384) &>> 15)
    }

    /// One row of `width` pixels; `bgra` false means RGB24.
    static func convertRow(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, width: Int, bgra: Bool) {
        var x = 0
        #if arch(x86_64)
        x = bgra ? vectorBGRA(s, d, width) : vectorRGB(s, d, width)
        #endif
        let stride = bgra ? 4 : 3, (ri, bi) = bgra ? (2, 0) : (0, 2)
        while x < width {
            let p = s + stride &* x
            d[x] = gray(r: p[ri], g: p[1], b: p[bi])
            x += 1
        }
    }
}

#if arch(x86_64)
extension RGBToGray {
    /// 16 gray bytes from four vectors of 32-bit pixels whose bytes 0 and 2 are weighted by
    /// `outer` and byte 1 by `green`. Byte 3 is alpha (ignored) or, for RGB24, zero.
    @inline(__always)
    static func gray16(_ q: (__m128i, __m128i, __m128i, __m128i), outer: __m128i, zeroTopByte: Bool) -> __m128i {
        let low = _mm_set1_epi32(0x00FF_00FF), one = _mm_set1_epi32(0x0001_0000)
        let greenAndRounding = _mm_set1_epi32(Int32(16384) << 16 | green), rounding = _mm_set1_epi32(16384)
        @inline(__always) func four(_ p: __m128i) -> __m128i {
            let sides = _mm_madd_epi16(_mm_and_si128(p, low), outer)
            let middle = zeroTopByte
                ? _mm_madd_epi16(_mm_or_si128(_mm_srli_epi16(p, 8), one), greenAndRounding) // (G, 1): rounding in the 2nd lane
                : _mm_add_epi32(_mm_madd_epi16(_mm_srli_epi16(p, 8), _mm_set1_epi32(green)), rounding) // (G, A)·(green, 0)
            return _mm_srli_epi32(_mm_add_epi32(sides, middle), 15)
        }
        return _mm_packus_epi16(_mm_packs_epi32(four(q.0), four(q.1)), _mm_packs_epi32(four(q.2), four(q.3)))
    }

    static func vectorBGRA(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int) -> Int {
        let outer = _mm_set1_epi32(red << 16 | blue)
        var x = 0
        while x + 16 <= width {
            let p = UnsafeRawPointer(s + 4 * x)
            @inline(__always) func load(_ o: Int) -> __m128i { _mm_loadu_si128(p.advanced(by: o).assumingMemoryBound(to: __m128i_u.self)) }
            _mm_storeu_si128(UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m128i_u.self),
                             gray16((load(0), load(16), load(32), load(48)), outer: outer, zeroTopByte: false))
            x += 16
        }
        return x
    }

    static func vectorRGB(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int) -> Int {
        let outer = _mm_set1_epi32(blue << 16 | red)
        let first = _mm_set1_epi64x(0x00FF_FFFF), second = _mm_set1_epi64x(0x00FF_FFFF_0000_0000)
        var x = 0
        // Each 8-byte load holds two whole pixels; the last one reads 2 bytes past pixel x + 15.
        while x + 17 <= width {
            let p = UnsafeRawPointer(s + 3 * x)
            @inline(__always) func four(_ o: Int) -> __m128i {
                let q = _mm_unpacklo_epi64(_mm_loadl_epi64(p.advanced(by: o).assumingMemoryBound(to: __m128i_u.self)),
                                           _mm_loadl_epi64(p.advanced(by: o + 6).assumingMemoryBound(to: __m128i_u.self)))
                return _mm_or_si128(_mm_and_si128(q, first), _mm_and_si128(_mm_slli_epi64(q, 8), second))
            }
            _mm_storeu_si128(UnsafeMutableRawPointer(d + x).assumingMemoryBound(to: __m128i_u.self),
                             gray16((four(0), four(12), four(24), four(36)), outer: outer, zeroTopByte: true))
            x += 16
        }
        return x
    }
}
#endif
