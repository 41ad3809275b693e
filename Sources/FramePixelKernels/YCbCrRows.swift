#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Y'CbCr → RGB in 16-bit fixed point with 6 fractional bits: the arithmetic that eight SSE2
/// lanes do at once with high-half multiplies (`pmulhw`), and the same integers in the scalar
/// code that finishes a row (and converts whole rows where there is no SSE2), so every pixel
/// gets the same answer on every path.
///
/// Each term is `(x·256 · gain·2^14) >> 16` = x·gain·64. Against OpenCV's 20-bit arithmetic
/// the result differs by at most 1 (the low bits of the products are dropped), in about 1 byte
/// in 100 on photos; OpenCV's own gains are used for BT.601 video range.
///
/// Compiled twice, as `GrayRows` is: in FramePixelKernels (SSE2) and in FramePixelKernelsAVX2
/// (`-target-cpu haswell`), where 32 pixels a step go through 256-bit registers first.
package struct YCbCrRows: Sendable {
    /// Luma gain at scale 2^14, applied to Y'·256 (unsigned: the full-range gain is exactly 1).
    let luma: UInt16
    let rv: Int16, gu: Int16, gv: Int16
    /// Blue's Cb gain less 2 (2·Cb is added as a shift): the whole gain, 2.02, exceeds Int16 at 2^14.
    let buLess2: Int16
    /// Video range subtracts 16 from luma (saturating at 0, as OpenCV does).
    let videoRange: Bool

    /// From the 20-bit gains (OpenCV's scale: ColorConversion's coefficients).
    package init(y: Int32, rv: Int32, gu: Int32, gv: Int32, bu: Int32, fullRange: Bool) {
        // The 20-bit gains rounded to 14 bits.
        func g(_ c: Int32) -> Int32 { Int32((Double(c) / 64).rounded()) }
        luma = UInt16(g(y))
        self.rv = Int16(g(rv))
        self.gu = Int16(g(gu))
        self.gv = Int16(g(gv))
        buLess2 = Int16(g(bu) - 32768)
        videoRange = !fullRange
    }

    // MARK: The arithmetic, one pixel at a time

    @inline(__always)
    static func highHalf(_ a: Int16, _ b: Int16) -> Int16 { Int16(truncatingIfNeeded: (Int32(a) &* Int32(b)) &>> 16) }

    @inline(__always)
    func lumaTerm(_ y: UInt8) -> Int16 {
        var y8 = UInt16(y) &<< 8
        if videoRange { y8 = y8 >= 0x1000 ? y8 &- 0x1000 : 0 }
        return Int16(truncatingIfNeeded: (UInt32(y8) &* UInt32(luma)) &>> 16)
    }

    /// The chroma part of R, G and B for one Cb/Cr pair, each with the rounding for the final >> 6.
    @inline(__always)
    func chromaTerms(_ u: UInt8, _ v: UInt8) -> (r: Int16, g: Int16, b: Int16) {
        let u8 = Int16(bitPattern: (UInt16(u) &<< 8) ^ 0x8000)
        let v8 = Int16(bitPattern: (UInt16(v) &<< 8) ^ 0x8000)
        return (
            Self.highHalf(v8, rv) &+ 32,
            Self.highHalf(u8, gu) &+ Self.highHalf(v8, gv) &+ 32,
            (u8 &>> 1) &+ Self.highHalf(u8, buLess2) &+ 32
        )
    }

    /// Saturating add (as `paddsw`), >> 6, clamp to a byte (as `packuswb`).
    @inline(__always)
    static func channel(_ y: Int16, _ c: Int16) -> UInt8 {
        UInt8(clamping: Int16(clamping: Int32(y) &+ Int32(c)) &>> 6)
    }

    @inline(__always)
    func pixelPair(_ y0: UInt8, _ y1: UInt8, _ u: UInt8, _ v: UInt8, _ d: UnsafeMutablePointer<UInt8>, _ bgra: Bool) {
        let c = chromaTerms(u, v)
        let a = lumaTerm(y0)
        let b = lumaTerm(y1)
        if bgra {
            d[0] = Self.channel(a, c.b)
            d[1] = Self.channel(a, c.g)
            d[2] = Self.channel(a, c.r)
            d[3] = 255
            d[4] = Self.channel(b, c.b)
            d[5] = Self.channel(b, c.g)
            d[6] = Self.channel(b, c.r)
            d[7] = 255
        } else {
            d[0] = Self.channel(a, c.r)
            d[1] = Self.channel(a, c.g)
            d[2] = Self.channel(a, c.b)
            d[3] = Self.channel(b, c.r)
            d[4] = Self.channel(b, c.g)
            d[5] = Self.channel(b, c.b)
        }
    }

    // MARK: Rows

    /// Where a row's chroma is: interleaved Cb/Cr bytes (NV12), two planes (I420), or inside the
    /// luma row itself (YUYV).
    package enum Chroma {
        case interleaved(UnsafePointer<UInt8>)
        case planar(UnsafePointer<UInt8>, UnsafePointer<UInt8>)
        case packedYUYV

        /// From the chroma rows a caller has: none (YUYV), one (NV12's Cb/Cr pairs) or two (I420).
        package init(cb: UnsafePointer<UInt8>?, cr: UnsafePointer<UInt8>?) {
            switch (cb, cr) {
            case (let u?, let v?): self = .planar(u, v)
            case (let uv?, nil): self = .interleaved(uv)
            default: self = .packedYUYV
            }
        }
    }

    /// Converts one or two rows (NV12 and I420 rows come in pairs that share their chroma) of
    /// `width` pixels. For YUYV, `luma` is the packed row and `second` must be nil.
    package func convertRows(
        luma: UnsafePointer<UInt8>, into d: UnsafeMutablePointer<UInt8>,
        second: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>)?,
        chroma: Chroma, width: Int, bgra: Bool
    ) {
        var x = 0
        #if FRAMEKIT_AVX2
        // One inlined copy of the step per layout and output, so that none tests them per step
        // (the tests, and the constants they kept out of registers, were a tenth of NV12 → BGRA).
        switch (chroma, bgra) {
        case (.packedYUYV, true): x = yuyvBGRA(luma, into: d, width: width)
        case (.interleaved, true): x = wideRows(luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: true)
        case (.interleaved, false): x = wideRows(luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: false)
        case (.planar, true): x = wideRows(luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: true)
        case (.planar, false): x = wideRows(luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: false)
        case (.packedYUYV, false): x = wideRows(luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: false)
        }
        #endif
        #if arch(x86_64)
        x += vectorRows(from: x, luma: luma, into: d, second: second, chroma: chroma, width: width, bgra: bgra)
        #endif
        let stride = bgra ? 4 : 3
        while x + 1 < width {
            let (y0, y1, u, v): (UInt8, UInt8, UInt8, UInt8)
            switch chroma {
            case .interleaved(let uv): (y0, y1, u, v) = (luma[x], luma[x + 1], uv[x], uv[x + 1])
            case .planar(let cb, let cr): (y0, y1, u, v) = (luma[x], luma[x + 1], cb[x / 2], cr[x / 2])
            case .packedYUYV: (y0, y1, u, v) = (luma[2 * x], luma[2 * x + 2], luma[2 * x + 1], luma[2 * x + 3])
            }
            pixelPair(y0, y1, u, v, d + stride * x, bgra)
            if let (l, o) = second { pixelPair(l[x], l[x + 1], u, v, o + stride * x, bgra) }
            x += 2
        }
    }
}

#if arch(x86_64)
// SSE2 only (the baseline every x86-64 has; Swift has no run-time CPU dispatch). 16 pixels a step:
// luma split into even and odd pixels, which then line up with the 8 chroma pairs lane for lane.
extension YCbCrRows {
    @inline(__always)
    static func load(_ p: UnsafePointer<UInt8>) -> __m128i {
        _mm_loadu_si128(UnsafeRawPointer(p).assumingMemoryBound(to: __m128i_u.self))
    }

    @inline(__always)
    static func loadHalf(_ p: UnsafePointer<UInt8>) -> __m128i {
        _mm_loadl_epi64(UnsafeRawPointer(p).assumingMemoryBound(to: __m128i_u.self))
    }

    @inline(__always)
    static func store(_ v: __m128i, _ p: UnsafeMutablePointer<UInt8>) {
        _mm_storeu_si128(UnsafeMutableRawPointer(p).assumingMemoryBound(to: __m128i_u.self), v)
    }

    /// 16 pixels' channels (8 even pixels' bytes, then 8 odd) stored as BGRA or RGB24.
    @inline(__always)
    static func storePixels(r: __m128i, g: __m128i, b: __m128i, _ out: UnsafeMutablePointer<UInt8>, bgra: Bool) {
        let opaque = _mm_set1_epi8(-1)
        if bgra {
            // Interleave to 4-byte pixels (even pixels, odd pixels), then even with odd.
            let lowEven = _mm_unpacklo_epi8(b, g)
            let lowOdd = _mm_unpackhi_epi8(b, g)
            let highEven = _mm_unpacklo_epi8(r, opaque)
            let highOdd = _mm_unpackhi_epi8(r, opaque)
            let e0 = _mm_unpacklo_epi16(lowEven, highEven)
            let e1 = _mm_unpackhi_epi16(lowEven, highEven)
            let o0 = _mm_unpacklo_epi16(lowOdd, highOdd)
            let o1 = _mm_unpackhi_epi16(lowOdd, highOdd)
            store(_mm_unpacklo_epi32(e0, o0), out)
            store(_mm_unpackhi_epi32(e0, o0), out + 16)
            store(_mm_unpacklo_epi32(e1, o1), out + 32)
            store(_mm_unpackhi_epi32(e1, o1), out + 48)
        } else {
            // A pixel pair's 6 bytes are three 16-bit words: (R, G) of the even pixel,
            // (B even, R odd), (G, B) of the odd pixel. For 8 pairs: the three words, then
            // per two pairs three 32-bit words (their 12 bytes), then those interleaved into
            // three whole 16-byte stores (overlapping 8-byte stores were slower at 1080p).
            let w0 = _mm_unpacklo_epi8(r, g)
            let w1 = _mm_unpacklo_epi8(b, _mm_unpackhi_epi64(r, r))
            let w2 = _mm_unpackhi_epi8(g, b)
            let lowWords = _mm_set1_epi32(0xFFFF)
            let highWords = _mm_set1_epi32(Int32(bitPattern: 0xFFFF_0000))
            let d0 = unsafeBitCast(_mm_or_si128(_mm_and_si128(w0, lowWords), _mm_slli_epi32(w1, 16)), to: SIMD4<UInt32>.self)
            let d1 = unsafeBitCast(_mm_or_si128(_mm_and_si128(w2, lowWords), _mm_and_si128(w0, highWords)), to: SIMD4<UInt32>.self)
            let d2 = unsafeBitCast(_mm_or_si128(_mm_srli_epi32(w1, 16), _mm_and_si128(w2, highWords)), to: SIMD4<UInt32>.self)
            let o = UnsafeMutableRawPointer(out)
            o.storeBytes(of: SIMD4<UInt32>(d0[0], d1[0], d2[0], d0[1]), as: SIMD4<UInt32>.self)
            o.storeBytes(of: SIMD4<UInt32>(d1[1], d2[1], d0[2], d1[2]), toByteOffset: 16, as: SIMD4<UInt32>.self)
            o.storeBytes(of: SIMD4<UInt32>(d2[2], d0[3], d1[3], d2[3]), toByteOffset: 32, as: SIMD4<UInt32>.self)
        }
    }

    /// Converts from pixel `start` (even) on; returns how many pixels it converted (a multiple
    /// of 16); the caller finishes the row.
    @inline(__always)
    func vectorRows(
        from start: Int, luma: UnsafePointer<UInt8>, into d: UnsafeMutablePointer<UInt8>,
        second: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>)?,
        chroma: Chroma, width: Int, bgra: Bool
    ) -> Int {
        let lumaGain = _mm_set1_epi16(Int16(bitPattern: self.luma))
        let lumaOffset = _mm_set1_epi8(videoRange ? 16 : 0)
        let rvGain = _mm_set1_epi16(rv)
        let guGain = _mm_set1_epi16(gu)
        let gvGain = _mm_set1_epi16(gv)
        let buGain = _mm_set1_epi16(buLess2)
        let rounding = _mm_set1_epi16(32)
        let signFlip = _mm_set1_epi16(Int16(bitPattern: 0x8000))
        let highBytes = _mm_set1_epi16(Int16(bitPattern: 0xFF00))
        let lowBytes = _mm_set1_epi16(0x00FF)
        let zero = _mm_setzero_si128()
        let end = width - 15
        var x = start
        while x < end {
            // Cb and Cr as (c - 128)·256 in 16-bit lanes, one lane per pixel pair.
            let u8: __m128i
            let v8: __m128i
            let y0: __m128i
            switch chroma {
            case .interleaved(let uv):
                let c = Self.load(uv + x)
                u8 = _mm_xor_si128(_mm_slli_epi16(c, 8), signFlip)
                v8 = _mm_xor_si128(_mm_and_si128(c, highBytes), signFlip)
                y0 = Self.load(luma + x)
            case .planar(let cb, let cr):
                u8 = _mm_xor_si128(_mm_unpacklo_epi8(zero, Self.loadHalf(cb + x / 2)), signFlip)
                v8 = _mm_xor_si128(_mm_unpacklo_epi8(zero, Self.loadHalf(cr + x / 2)), signFlip)
                y0 = Self.load(luma + x)
            case .packedYUYV:
                // Y0 Cb Y1 Cr …: luma is the low byte of each 16-bit word, chroma the high byte.
                let a = Self.load(luma + 2 * x)
                let b = Self.load(luma + 2 * x + 16)
                y0 = _mm_packus_epi16(_mm_and_si128(a, lowBytes), _mm_and_si128(b, lowBytes))
                let c = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8))
                u8 = _mm_xor_si128(_mm_slli_epi16(c, 8), signFlip)
                v8 = _mm_xor_si128(_mm_and_si128(c, highBytes), signFlip)
            }
            let rc = _mm_add_epi16(_mm_mulhi_epi16(v8, rvGain), rounding)
            let gc = _mm_add_epi16(_mm_add_epi16(_mm_mulhi_epi16(u8, guGain), _mm_mulhi_epi16(v8, gvGain)), rounding)
            let bc = _mm_add_epi16(_mm_add_epi16(_mm_srai_epi16(u8, 1), _mm_mulhi_epi16(u8, buGain)), rounding)

            @inline(__always) func pixels(_ y: __m128i, _ out: UnsafeMutablePointer<UInt8>) {
                let y = _mm_subs_epu8(y, lumaOffset) // Y − 16 stopping at 0, all 16 bytes at once
                let even = _mm_mulhi_epu16(_mm_slli_epi16(y, 8), lumaGain)
                let odd = _mm_mulhi_epu16(_mm_and_si128(y, highBytes), lumaGain)
                @inline(__always) func channel(_ c: __m128i) -> __m128i { // 8 even pixels' bytes, then 8 odd
                    _mm_packus_epi16(_mm_srai_epi16(_mm_adds_epi16(even, c), 6), _mm_srai_epi16(_mm_adds_epi16(odd, c), 6))
                }
                Self.storePixels(r: channel(rc), g: channel(gc), b: channel(bc), out, bgra: bgra)
            }
            let stride = bgra ? 4 : 3
            pixels(y0, d + stride * x)
            if let (l, o) = second { pixels(Self.load(l + x), o + stride * x) }
            x += 16
        }
        return x - start
    }
}
#endif
