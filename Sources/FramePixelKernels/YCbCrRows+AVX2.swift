#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

#if FRAMEKIT_AVX2
// AVX2: the arithmetic of `vectorRows` on 256-bit registers, 32 pixels a step. Each 128-bit half
// holds 16 pixels with their own 8 chroma pairs, exactly as one SSE2 step does, so every lane
// computes what the SSE2 code computes; the halves are then stored by the same code.
extension YCbCrRows {
    @inline(__always)
    static func load256(_ p: UnsafePointer<UInt8>) -> __m256i {
        _mm256_loadu_si256(UnsafeRawPointer(p).assumingMemoryBound(to: __m256i_u.self))
    }

    /// 32 pixels as BGRA, each 128-bit half holding 8 even pixels' bytes then 8 odd, of the
    /// pixel groups `wideRows` spreads across the halves for BGRA (low half: pixels 0–3, 8–11,
    /// 16–19, 24–27; high: 4–7, 12–15, 20–23, 28–31). The interleave of `storePixels` on both
    /// halves at once then yields 8 consecutive pixels per register: four whole 32-byte stores.
    @inline(__always)
    static func storeBGRA(r: __m256i, g: __m256i, b: __m256i, _ out: UnsafeMutablePointer<UInt8>) {
        let opaque = _mm256_set1_epi8(-1)
        let lowEven = _mm256_unpacklo_epi8(b, g)
        let lowOdd = _mm256_unpackhi_epi8(b, g)
        let highEven = _mm256_unpacklo_epi8(r, opaque)
        let highOdd = _mm256_unpackhi_epi8(r, opaque)
        let e0 = _mm256_unpacklo_epi16(lowEven, highEven)
        let e1 = _mm256_unpackhi_epi16(lowEven, highEven)
        let o0 = _mm256_unpacklo_epi16(lowOdd, highOdd)
        let o1 = _mm256_unpackhi_epi16(lowOdd, highOdd)
        let o = UnsafeMutableRawPointer(out)
        @inline(__always) func store(_ v: __m256i, _ offset: Int) {
            _mm256_storeu_si256(o.advanced(by: offset).assumingMemoryBound(to: __m256i_u.self), v)
        }
        store(_mm256_unpacklo_epi32(e0, o0), 0)
        store(_mm256_unpackhi_epi32(e0, o0), 32)
        store(_mm256_unpacklo_epi32(e1, o1), 64)
        store(_mm256_unpackhi_epi32(e1, o1), 96)
    }

    /// The `pshufb` masks that place 16 pixels' R, G and B bytes (8 even pixels', then 8 odd,
    /// in each 128-bit half) into their 48 RGB24 bytes: `m[k][c]` picks channel `c`'s bytes of
    /// output bytes 16k…16k+15 (0x80, a zero, where another channel's byte goes).
    struct RGBMasks: Sendable {
        let r0: __m256i, g0: __m256i, b0: __m256i
        let r1: __m256i, g1: __m256i, b1: __m256i
        let r2: __m256i, g2: __m256i, b2: __m256i
        init() {
            func mask(_ k: Int, _ channel: Int) -> __m256i {
                var mask = SIMD32<UInt8>(repeating: 0x80)
                for j in 0..<16 where (16 * k + j) % 3 == channel {
                    let pixel = (16 * k + j) / 3
                    let index = UInt8(pixel % 2 == 0 ? pixel / 2 : 8 + pixel / 2)
                    mask[j] = index
                    mask[j + 16] = index
                }
                return unsafeBitCast(mask, to: __m256i.self)
            }
            (r0, g0, b0) = (mask(0, 0), mask(0, 1), mask(0, 2))
            (r1, g1, b1) = (mask(1, 0), mask(1, 1), mask(1, 2))
            (r2, g2, b2) = (mask(2, 0), mask(2, 1), mask(2, 2))
        }
    }

    /// Made once, on the AVX2 path's first call (never on a CPU without AVX2): building them per
    /// row cost as much as the row, and as a stored property they made the kernel 300 bytes,
    /// copied on every call.
    static let rgbMasks = RGBMasks()

    /// 32 pixels as RGB24: three ORs of three byte shuffles per 48 bytes (each 128-bit half's);
    /// the halves are 48 bytes apart.
    @inline(__always)
    static func storeRGB(r: __m256i, g: __m256i, b: __m256i, _ m: RGBMasks, _ out: UnsafeMutablePointer<UInt8>) {
        let o = UnsafeMutableRawPointer(out)
        @inline(__always) func store(_ k: Int, _ mr: __m256i, _ mg: __m256i, _ mb: __m256i) {
            let v = _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(r, mr), _mm256_shuffle_epi8(g, mg)), _mm256_shuffle_epi8(b, mb))
            _mm256_storeu2_m128i(
                o.advanced(by: 48 + 16 * k).assumingMemoryBound(to: __m128i_u.self),
                o.advanced(by: 16 * k).assumingMemoryBound(to: __m128i_u.self), v)
        }
        store(0, m.r0, m.g0, m.b0)
        store(1, m.r1, m.g1, m.b1)
        store(2, m.r2, m.g2, m.b2)
    }

    /// The gains in 256-bit registers, and `chromaTerms`' arithmetic (before its rounding 32) on
    /// 16 Cb/Cr lanes at once: shared by both AVX2 steps, whose lanes differ (a pixel pair each in
    /// `wideRows`, a pixel each in `yuyvBGRA`) but whose integers must be the scalar code's.
    struct WideGains {
        let luma: __m256i, rv: __m256i, gu: __m256i, gv: __m256i, bu: __m256i

        @inline(__always)
        init(_ k: YCbCrRows) {
            luma = _mm256_set1_epi16(Int16(bitPattern: k.luma))
            (rv, gu, gv) = (_mm256_set1_epi16(k.rv), _mm256_set1_epi16(k.gu), _mm256_set1_epi16(k.gv))
            bu = _mm256_set1_epi16(k.buLess2)
        }

        /// R's, G's and B's chroma parts for (Cb − 128)·256 and (Cr − 128)·256.
        @inline(__always)
        func chroma(_ u8: __m256i, _ v8: __m256i) -> (r: __m256i, g: __m256i, b: __m256i) {
            (
                _mm256_mulhi_epi16(v8, rv), _mm256_add_epi16(_mm256_mulhi_epi16(u8, gu), _mm256_mulhi_epi16(v8, gv)),
                _mm256_add_epi16(_mm256_srai_epi16(u8, 1), _mm256_mulhi_epi16(u8, bu))
            )
        }
    }

    /// YUYV → BGRA, 32 pixels a step with one pixel per 16-bit lane, YUYV's own order: Y'·256
    /// is the word shifted left by 8, and a byte shuffle copies each pair's Cb and Cr into both
    /// of its pixels' lanes. No packs to split luma from chroma and none of `wideRows`' even/odd
    /// split: 1.28x → 1.14x libyuv's time at 720p (probe, interleaved runs).
    @inline(__always)
    func yuyvBGRA(_ row: UnsafePointer<UInt8>, into d: UnsafeMutablePointer<UInt8>, width: Int) -> Int {
        let gains = WideGains(self)
        let lumaOffset = _mm256_set1_epi16(videoRange ? 0x1000 : 0)
        let rounding = _mm256_set1_epi16(512)
        let chromaSign = _mm256_set1_epi16(Int16(bitPattern: 0x8000))
        let opaque = _mm256_set1_epi8(-1)
        // The 16 pixels of a load in 64-bit groups (0, 2 | 1, 3): after the per-half packs and
        // interleaves below, each of the four stores then gets 8 consecutive pixels.
        let order = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
        let cb = _mm256_setr_epi8(
            -128, 1, -128, 1, -128, 5, -128, 5, -128, 9, -128, 9, -128, 13, -128, 13,
            -128, 1, -128, 1, -128, 5, -128, 5, -128, 9, -128, 9, -128, 13, -128, 13)
        let cr = _mm256_setr_epi8(
            -128, 3, -128, 3, -128, 7, -128, 7, -128, 11, -128, 11, -128, 15, -128, 15,
            -128, 3, -128, 3, -128, 7, -128, 7, -128, 11, -128, 11, -128, 15, -128, 15)
        @inline(__always) func sixteen(_ p: UnsafePointer<UInt8>) -> (r: __m256i, g: __m256i, b: __m256i) {
            // Chroma's sign flipped once, in the high byte of each word (the shift drops it from luma).
            let v = _mm256_xor_si256(_mm256_permutevar8x32_epi32(Self.load256(p), order), chromaSign)
            let y = _mm256_mulhi_epu16(_mm256_subs_epu16(_mm256_slli_epi16(v, 8), lumaOffset), gains.luma)
            let c = gains.chroma(_mm256_shuffle_epi8(v, cb), _mm256_shuffle_epi8(v, cr))
            // (s·512 + 2^14) >> 15 = (s + 32) >> 6 (on the multiply ports, not the shift ports
            // the shuffles share). The SSE2 code adds the 32 before its saturating add instead;
            // the two differ only where that add saturates, and there both give ≥ 511 (or
            // ≤ −512), which the pack clamps to the same 255 (or 0).
            @inline(__always) func channel(_ c: __m256i) -> __m256i { _mm256_mulhrs_epi16(_mm256_adds_epi16(y, c), rounding) }
            return (channel(c.r), channel(c.g), channel(c.b))
        }
        let end = width - 31
        var x = 0
        while x < end {
            let p = sixteen(row + 2 * x)
            let q = sixteen(row + 2 * x + 32)
            let r = _mm256_packus_epi16(p.r, q.r)
            let g = _mm256_packus_epi16(p.g, q.g)
            let b = _mm256_packus_epi16(p.b, q.b)
            let lowBG = _mm256_unpacklo_epi8(b, g)
            let lowRA = _mm256_unpacklo_epi8(r, opaque)
            let highBG = _mm256_unpackhi_epi8(b, g)
            let highRA = _mm256_unpackhi_epi8(r, opaque)
            let o = UnsafeMutableRawPointer(d + 4 * x)
            @inline(__always) func store(_ v: __m256i, _ offset: Int) {
                _mm256_storeu_si256(o.advanced(by: offset).assumingMemoryBound(to: __m256i_u.self), v)
            }
            store(_mm256_unpacklo_epi16(lowBG, lowRA), 0)
            store(_mm256_unpackhi_epi16(lowBG, lowRA), 32)
            store(_mm256_unpacklo_epi16(highBG, highRA), 64)
            store(_mm256_unpackhi_epi16(highBG, highRA), 96)
            x += 32
        }
        return x
    }

    /// Returns how many pixels were converted (a multiple of 32), from pixel 0.
    @inline(__always)
    func wideRows(
        luma: UnsafePointer<UInt8>, into d: UnsafeMutablePointer<UInt8>,
        second: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>)?,
        chroma: Chroma, width: Int, bgra: Bool
    ) -> Int {
        let gains = WideGains(self)
        let lumaOffset = _mm256_set1_epi8(videoRange ? 16 : 0)
        let rounding = _mm256_set1_epi16(32)
        let signFlip = _mm256_set1_epi16(Int16(bitPattern: 0x8000))
        let highBytes = _mm256_set1_epi16(Int16(bitPattern: 0xFF00))
        let lowBytes = _mm256_set1_epi16(0x00FF)
        // For BGRA the pixels are spread in groups of four across the halves (see `storeBGRA`):
        // a 32-bit permute of luma and chroma alike, as every lane's arithmetic is its own.
        let spread = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)
        @inline(__always) func arranged(_ v: __m256i) -> __m256i { bgra ? _mm256_permutevar8x32_epi32(v, spread) : v }
        // After a per-half pack of two 16-pixel loads the 32-bit groups are (0-3, 4-7, 16-19,
        // 20-23 | 8-11, 12-15, 24-27, 28-31): back into pixel order. (Only for RGB24: YUYV →
        // BGRA is `yuyvBGRA`.)
        let packOrder = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
        // (Only RGB24 reads them: the static's once-check cost BGRA 2% of its time, a call a row.)
        let masks = bgra ? nil : Self.rgbMasks
        let stride = bgra ? 4 : 3
        let end = width - 31
        var x = 0
        while x < end {
            let u8: __m256i
            let v8: __m256i
            let y0: __m256i
            switch chroma {
            case .interleaved(let uv):
                let c = arranged(Self.load256(uv + x))
                u8 = _mm256_xor_si256(_mm256_slli_epi16(c, 8), signFlip)
                v8 = _mm256_xor_si256(_mm256_and_si256(c, highBytes), signFlip)
                y0 = arranged(Self.load256(luma + x))
            case .planar(let cb, let cr):
                // 16 Cb (and Cr) bytes widened to 16-bit lanes: pairs 0-7 in the low half, 8-15 in the high.
                u8 = arranged(_mm256_xor_si256(_mm256_slli_epi16(_mm256_cvtepu8_epi16(Self.load(cb + x / 2)), 8), signFlip))
                v8 = arranged(_mm256_xor_si256(_mm256_slli_epi16(_mm256_cvtepu8_epi16(Self.load(cr + x / 2)), 8), signFlip))
                y0 = arranged(Self.load256(luma + x))
            case .packedYUYV:
                let a = Self.load256(luma + 2 * x)
                let b = Self.load256(luma + 2 * x + 32)
                y0 = _mm256_permutevar8x32_epi32(
                    _mm256_packus_epi16(_mm256_and_si256(a, lowBytes), _mm256_and_si256(b, lowBytes)), packOrder)
                let c = _mm256_permutevar8x32_epi32(
                    _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8)), packOrder)
                u8 = _mm256_xor_si256(_mm256_slli_epi16(c, 8), signFlip)
                v8 = _mm256_xor_si256(_mm256_and_si256(c, highBytes), signFlip)
            }
            let terms = gains.chroma(u8, v8)
            let rc = _mm256_add_epi16(terms.r, rounding)
            let gc = _mm256_add_epi16(terms.g, rounding)
            let bc = _mm256_add_epi16(terms.b, rounding)

            @inline(__always) func pixels(_ y: __m256i, _ out: UnsafeMutablePointer<UInt8>) {
                let y = _mm256_subs_epu8(y, lumaOffset)
                let even = _mm256_mulhi_epu16(_mm256_slli_epi16(y, 8), gains.luma)
                let odd = _mm256_mulhi_epu16(_mm256_and_si256(y, highBytes), gains.luma)
                @inline(__always) func channel(_ c: __m256i) -> __m256i {
                    _mm256_packus_epi16(
                        _mm256_srai_epi16(_mm256_adds_epi16(even, c), 6), _mm256_srai_epi16(_mm256_adds_epi16(odd, c), 6))
                }
                let (r, g, b) = (channel(rc), channel(gc), channel(bc))
                if bgra {
                    Self.storeBGRA(r: r, g: g, b: b, out)
                } else {
                    Self.storeRGB(r: r, g: g, b: b, masks!, out)
                }
            }
            pixels(y0, d + stride * x)
            if let (l, o) = second { pixels(arranged(Self.load256(l + x)), o + stride * x) }
            x += 32
        }
        return x
    }
}
#endif
