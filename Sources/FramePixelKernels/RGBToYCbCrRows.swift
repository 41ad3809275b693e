#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// RGB24/BGRA → Y'CbCr 4:2:0 (NV12 or I420), two rows at a time: luma per pixel by
/// `GrayRows` with the matrix's weights (in 256ths where that keeps every colour within 1 of the
/// definition, else 32768ths: `lumaWeights`; offset in the bias), chroma per 2x2 block from
/// the block's channel sums — a box average, as libyuv and video encoders take it (OpenCV's
/// cvtColor takes the block's top-left pixel alone) — with 14-bit weights on the 4-pixel sums:
/// Cb = (cbR·ΣR + cbG·ΣG + cbB·ΣB + 128·2^16 + 2^15) >> 16, and Cr alike.
///
/// Compiled twice, as `GrayRows` is: the SSE2 build sums blocks 16 pixels a step (RGB24's pixels
/// each from a 4-byte load: SSE2 has no byte shuffle to spread 3-byte pixels), the AVX2 build 32
/// pixels a step. Every path computes the same integers.
package struct RGBToYCbCrRows: Sendable {
    package let luma: GrayRows.Weights
    let cbR: Int16, cbG: Int16, cbB: Int16
    let crR: Int16, crG: Int16, crB: Int16
    static let chromaBias: Int32 = 128 << 16 + 1 << 15

    /// From the matrix's luma coefficients (`kr`, `kb`: 0.299/0.114 for BT.601, 0.2126/0.0722
    /// for BT.709) and the range (video: luma 16–235, chroma 16–240; full: 0–255).
    package init(kr: Double, kb: Double, fullRange: Bool) {
        let kg = 1 - kr - kb
        let (ys, cs) = fullRange ? (1.0, 1.0) : (219.0 / 255, 224.0 / 255)
        luma = Self.lumaWeights(kr * ys, kg * ys, kb * ys, offset: fullRange ? 0 : 16)
        func c(_ k: Double) -> Int16 { Int16((k * cs * 16384).rounded()) }
        (cbR, cbG, cbB) = (c(-kr / (2 * (1 - kb))), c(-kg / (2 * (1 - kb))), c(0.5))
        (crR, crG, crB) = (c(0.5), c(-kg / (2 * (1 - kr))), c(-kb / (2 * (1 - kr))))
    }

    /// Luma = offset + wr·R + wg·G + wb·B, rounded: with weights in 256ths (each stored × 128,
    /// so that the 15-bit arithmetic of `GrayRows` computes exactly (Σ w·p + bias) >> 8 and the
    /// AVX2 build can take them as bytes, `pmaddubsw`) where those keep every colour's error
    /// before the rounding below `maxByteWeightError` (then within 1 of the definition), else in
    /// 32768ths. The error of a weighted sum is largest at a corner of the colour cube: all of
    /// the weights rounded up at 255, the rest at 0 (or the other way).
    package static func lumaWeights(_ r: Double, _ g: Double, _ b: Double, offset: Int32) -> GrayRows.Weights {
        let bytes = [r, g, b].map { ($0 * 256).rounded() }
        if byteWeightError(r, g, b) < maxByteWeightError {
            let w = bytes.map { Int32($0) << 7 }
            return GrayRows.Weights(red: w[0], green: w[1], blue: w[2], bias: (offset << 8 + 1 << 7) << 7)
        }
        func l(_ k: Double) -> Int32 { Int32((k * 32768).rounded()) }
        return GrayRows.Weights(red: l(r), green: l(g), blue: l(b), bias: offset << 15 + 1 << 14)
    }

    /// The largest error before rounding, in steps of the output, of weights in 256ths: BT.601
    /// 0.26 (video range) and 0.45 (full), BT.709 video 0.38; BT.709 full range 1.00, above the
    /// bound, keeps 15 bits.
    package static func byteWeightError(_ r: Double, _ g: Double, _ b: Double) -> Double {
        let errors = [r, g, b].map { ($0 * 256).rounded() / 256 - $0 }
        return max(errors.filter { $0 > 0 }.reduce(0, +), -errors.filter { $0 < 0 }.reduce(0, +)) * 255
    }

    package static let maxByteWeightError = 0.48

    /// Where a chroma row goes: Cb/Cr pairs (NV12) or two planes (I420).
    package enum ChromaOut {
        case interleaved(UnsafeMutablePointer<UInt8>)
        case planar(UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>)
    }

    /// Rows `top` and `bottom` (the same row for an odd last one) of `width` pixels: their
    /// luma (`lumaBottom` nil: not written) and the chroma row of their 2x2 blocks (the last
    /// block of an odd width is its one column, counted twice).
    package func convertRows(
        _ top: UnsafePointer<UInt8>, _ bottom: UnsafePointer<UInt8>, lumaTop: UnsafeMutablePointer<UInt8>,
        lumaBottom: UnsafeMutablePointer<UInt8>?, chroma: ChromaOut, width: Int, bgra: Bool
    ) {
        var pair = 0
        // Pixels whose luma is written: the AVX2 step writes it with the chroma, from the same loads.
        var lumaDone = 0
        #if FRAMEKIT_AVX2
        // One specialised loop per input and luma arithmetic, so that the step tests neither
        // (the tests were a fifth of its samples; inlining four copies into this function did not
        // always happen: past a size the optimiser stops inlining into a caller).
        let rows = (top, bottom, lumaTop, lumaBottom)
        switch (bgra, GrayRows.WideSums.bytesFit(luma)) {
        case (true, true): pair = wideChromaAndLuma(BGRAInBytes.self, rows, chroma, width: width)
        case (true, false): pair = wideChromaAndLuma(BGRAInWords.self, rows, chroma, width: width)
        case (false, true): pair = wideChromaAndLuma(RGBInBytes.self, rows, chroma, width: width)
        case (false, false): pair = wideChromaAndLuma(RGBInWords.self, rows, chroma, width: width)
        }
        lumaDone = 2 &* pair
        #endif
        #if arch(x86_64)
        pair = vectorChroma(top, bottom, chroma, from: pair, width: width, bgra: bgra)
        #endif
        let stride = bgra ? 4 : 3
        let (ri, bi) = bgra ? (2, 0) : (0, 2)
        while 2 &* pair < width {
            let x0 = 2 &* pair
            let x1 = min(x0 &+ 1, width &- 1)
            @inline(__always) func sum(_ c: Int) -> Int32 {
                Int32(top[stride &* x0 &+ c]) &+ Int32(top[stride &* x1 &+ c]) &+ Int32(bottom[stride &* x0 &+ c])
                    &+ Int32(bottom[stride &* x1 &+ c])
            }
            let (r, g, b) = (sum(ri), sum(1), sum(bi))
            let u = (Int32(cbR) &* r &+ Int32(cbG) &* g &+ Int32(cbB) &* b &+ Self.chromaBias) &>> 16
            let v = (Int32(crR) &* r &+ Int32(crG) &* g &+ Int32(crB) &* b &+ Self.chromaBias) &>> 16
            switch chroma {
            case .interleaved(let uv):
                uv[2 &* pair] = UInt8(clamping: u)
                uv[2 &* pair &+ 1] = UInt8(clamping: v)
            case .planar(let cb, let cr):
                cb[pair] = UInt8(clamping: u)
                cr[pair] = UInt8(clamping: v)
            }
            pair &+= 1
        }
        // The rest of the luma after the chroma, which read both rows at once (two streams from
        // memory in flight; luma first waited on one row at a time): these rows are in the cache.
        let at = stride &* lumaDone
        GrayRows.convertRow(top + at, lumaTop + lumaDone, width: width &- lumaDone, bgra: bgra, weights: luma)
        if let lumaBottom {
            GrayRows.convertRow(bottom + at, lumaBottom + lumaDone, width: width &- lumaDone, bgra: bgra, weights: luma)
        }
    }
}

#if arch(x86_64)
extension RGBToYCbCrRows {
    /// 8 blocks (16 pixels of each row) a step from block `start`; returns the blocks done.
    func vectorChroma(
        _ top: UnsafePointer<UInt8>, _ bottom: UnsafePointer<UInt8>, _ chroma: ChromaOut, from start: Int, width: Int, bgra: Bool
    ) -> Int {
        let zero = _mm_setzero_si128()
        // Per block: its channel sums as 16-bit words — BGRA (B, G, R, A), RGB24 (R, G, B, ·) —
        // against Cb's and Cr's weights in that order (0 for the fourth word).
        let wu = bgra ? _mm_set_epi16(0, cbR, cbG, cbB, 0, cbR, cbG, cbB) : _mm_set_epi16(0, cbB, cbG, cbR, 0, cbB, cbG, cbR)
        let wv = bgra ? _mm_set_epi16(0, crR, crG, crB, 0, crR, crG, crB) : _mm_set_epi16(0, crB, crG, crR, 0, crB, crG, crR)
        let bias = _mm_set1_epi32(Self.chromaBias)
        let lowBytes = _mm_set1_epi16(0x00FF)
        var pair = start
        // RGB24 reads 4 bytes at each pixel's 3: the step's last block reads through byte 6·pair + 48.
        while 2 &* pair &+ 16 <= width && (bgra || 6 &* pair &+ 50 <= 3 &* width) {
            @inline(__always) func blockSums(_ k: Int) -> __m128i {
                if bgra {
                    // Pixels 4k…4k+3 of the step, both rows: blocks 2k and 2k + 1.
                    let o = 8 &* pair &+ 16 &* k
                    let t = _mm_loadu_si128(UnsafeRawPointer(top + o).assumingMemoryBound(to: __m128i_u.self))
                    let b = _mm_loadu_si128(UnsafeRawPointer(bottom + o).assumingMemoryBound(to: __m128i_u.self))
                    let lo = _mm_add_epi16(_mm_unpacklo_epi8(t, zero), _mm_unpacklo_epi8(b, zero))
                    let hi = _mm_add_epi16(_mm_unpackhi_epi8(t, zero), _mm_unpackhi_epi8(b, zero))
                    return _mm_add_epi16(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi))
                }
                // RGB24: each pixel of a block as a 4-byte load (R G B and the next byte, weighted 0),
                // the four widened to words and added.
                @inline(__always) func block(_ j: Int) -> __m128i {
                    let o = 6 &* (pair &+ j)
                    @inline(__always) func pixel(_ row: UnsafePointer<UInt8>, _ at: Int) -> __m128i {
                        _mm_unpacklo_epi8(
                            _mm_cvtsi32_si128(Int32(bitPattern: UnsafeRawPointer(row + at).loadUnaligned(as: UInt32.self))), zero)
                    }
                    return _mm_add_epi16(
                        _mm_add_epi16(pixel(top, o), pixel(top, o &+ 3)), _mm_add_epi16(pixel(bottom, o), pixel(bottom, o &+ 3)))
                }
                return _mm_unpacklo_epi64(block(2 &* k), block(2 &* k &+ 1))
            }
            @inline(__always) func four(_ k: Int) -> __m128i {
                let sums = blockSums(k)
                let mu = _mm_madd_epi16(sums, wu)
                let mv = _mm_madd_epi16(sums, wv)
                // (u0a u0b u1a u1b), (v0a …) → (u0 v0 u1 v1): the halves of each block's sum added.
                let x = _mm_unpacklo_epi32(mu, mv)
                let y = _mm_unpackhi_epi32(mu, mv)
                return _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(_mm_unpacklo_epi64(x, y), _mm_unpackhi_epi64(x, y)), bias), 16)
            }
            let uv = _mm_packus_epi16(_mm_packs_epi32(four(0), four(1)), _mm_packs_epi32(four(2), four(3)))
            switch chroma {
            case .interleaved(let out):
                _mm_storeu_si128(UnsafeMutableRawPointer(out + 2 &* pair).assumingMemoryBound(to: __m128i_u.self), uv)
            case .planar(let cb, let cr):
                let u = _mm_packus_epi16(_mm_and_si128(uv, lowBytes), zero)
                let v = _mm_packus_epi16(_mm_srli_epi16(uv, 8), zero)
                _mm_storel_epi64(UnsafeMutableRawPointer(cb + pair).assumingMemoryBound(to: __m128i_u.self), u)
                _mm_storel_epi64(UnsafeMutableRawPointer(cr + pair).assumingMemoryBound(to: __m128i_u.self), v)
            }
            pair &+= 8
        }
        return pair
    }
}
#endif

#if FRAMEKIT_AVX2
/// The AVX2 encoder step's input layout and luma arithmetic as types, so that each combination
/// is its own specialised loop with both as constants.
protocol WideStep {
    static var bgra: Bool { get }
    static var lumaInBytes: Bool { get }
}
enum BGRAInBytes: WideStep {
    static var bgra: Bool { true }
    static var lumaInBytes: Bool { true }
}
enum BGRAInWords: WideStep {
    static var bgra: Bool { true }
    static var lumaInBytes: Bool { false }
}
enum RGBInBytes: WideStep {
    static var bgra: Bool { false }
    static var lumaInBytes: Bool { true }
}
enum RGBInWords: WideStep {
    static var bgra: Bool { false }
    static var lumaInBytes: Bool { false }
}

extension RGBToYCbCrRows {
    /// 16 blocks (32 pixels of each row) a step, each 128-bit half doing what one SSE2 `four`
    /// does. Each row's pixel pairs are summed by a byte shuffle that puts a pair's two bytes of
    /// each channel side by side — (B, B', G, G', R, R', 0, 0), for BGRA and RGB24 alike — and a
    /// `pmaddubsw` against ones: the rows' pair sums added are the block sums, in two shuffles
    /// where widening and adding halves took six. Returns the blocks done, from 0.
    ///
    /// The rows' luma comes from the same loads (`GrayRows.WideSums`), written for the pixels of
    /// the blocks done (`rows`: top, bottom, their luma rows; no bottom luma for an odd last row).
    func wideChromaAndLuma<Step: WideStep>(
        _ step: Step.Type, _ rows: (UnsafePointer<UInt8>, UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>?),
        _ chroma: ChromaOut, width: Int
    ) -> Int {
        let bgra = Step.bgra
        let (top, bottom, lumaTop, lumaBottom) = rows
        let lumaSums = GrayRows.WideSums(luma, bgra: bgra, inBytes: Step.lumaInBytes)
        let zero = _mm256_setzero_si256()
        let ones = _mm256_set1_epi8(1)
        let wu = _mm256_setr_epi16(cbB, cbG, cbR, 0, cbB, cbG, cbR, 0, cbB, cbG, cbR, 0, cbB, cbG, cbR, 0)
        let wv = _mm256_setr_epi16(crB, crG, crR, 0, crB, crG, crR, 0, crB, crG, crR, 0, crB, crG, crR, 0)
        let bias = _mm256_set1_epi32(Self.chromaBias)
        let lowBytes = _mm256_set1_epi16(0x00FF)
        let z: Int8 = -128
        // Per 128-bit half, four pixels — BGRA's at bytes 4j (B, G, R, A), RGB24's at 3j (R, G, B) —
        // as two blocks' pairs of B, G and R bytes.
        let pairs =
            bgra
            ? _mm256_setr_epi8(0, 4, 1, 5, 2, 6, z, z, 8, 12, 9, 13, 10, 14, z, z, 0, 4, 1, 5, 2, 6, z, z, 8, 12, 9, 13, 10, 14, z, z)
            : _mm256_setr_epi8(2, 5, 1, 4, 0, 3, z, z, 8, 11, 7, 10, 6, 9, z, z, 2, 5, 1, 4, 0, 3, z, z, 8, 11, 7, 10, 6, 9, z, z)
        let blockOrder = _mm256_setr_epi8(
            0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15)
        // After the packs, 32-bit groups of two blocks come as 0 2 4 6 | 1 3 5 7 (in blocks 0-1, 4-5, … | 2-3, 6-7, …).
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)
        // RGB24's last 16-byte load reads 4 bytes past its 8 pixels: inside the row where a step's
        // 32 pixels start 34 before the row's end. Steps by blocks (pixel pairs).
        return overlappedSteps(count: width / 2, step: 16, reach: bgra ? 16 : 17) { pair in
            // Each row's pixels x…x+7 (x…x+3 in the low half, x+4…x+7 in the high), loaded once:
            // their luma sums, and their chroma as 16-bit pair sums.
            var (topLuma, bottomLuma, previous) = ((zero, zero), (zero, zero), (zero, zero))
            @inline(__always) func eight(_ k: Int) -> __m256i {
                let x = 2 &* pair &+ 8 &* k
                let (t, b) = (lumaSums.load(top, x), lumaSums.load(bottom, x))
                // Luma words of loads 0–1 and 2–3.
                switch k {
                case 0, 2: previous = (t, b)
                case 1: (topLuma.0, bottomLuma.0) = (lumaSums.sixteen(previous.0, t), lumaSums.sixteen(previous.1, b))
                default: (topLuma.1, bottomLuma.1) = (lumaSums.sixteen(previous.0, t), lumaSums.sixteen(previous.1, b))
                }
                // Per block (B, G, R, 0) sums, two blocks a half, as the SSE2 `blockSums` gives them;
                // `pmaddwd` leaves each block's Cb and Cr as two halves, one `phaddd` adds them:
                // (Cb a, Cb b, Cr a, Cr b) a half.
                let sums = _mm256_add_epi16(
                    _mm256_maddubs_epi16(_mm256_shuffle_epi8(t, pairs), ones), _mm256_maddubs_epi16(_mm256_shuffle_epi8(b, pairs), ones))
                return _mm256_srai_epi32(
                    _mm256_add_epi32(_mm256_hadd_epi32(_mm256_madd_epi16(sums, wu), _mm256_madd_epi16(sums, wv)), bias), 16)
            }
            // Bytes in each 32-bit group (Cb a, Cb b, Cr a, Cr b) → (Cb a, Cr a, Cb b, Cr b).
            let pairsInOrder = _mm256_shuffle_epi8(
                _mm256_packus_epi16(_mm256_packs_epi32(eight(0), eight(1)), _mm256_packs_epi32(eight(2), eight(3))), blockOrder)
            _mm256_storeu_si256(
                UnsafeMutableRawPointer(lumaTop + 2 &* pair).assumingMemoryBound(to: __m256i_u.self), lumaSums.bytes(topLuma.0, topLuma.1))
            if let lumaBottom {
                _mm256_storeu_si256(
                    UnsafeMutableRawPointer(lumaBottom + 2 &* pair).assumingMemoryBound(to: __m256i_u.self),
                    lumaSums.bytes(bottomLuma.0, bottomLuma.1))
            }
            let uv = _mm256_permutevar8x32_epi32(pairsInOrder, order)
            switch chroma {
            case .interleaved(let out):
                _mm256_storeu_si256(UnsafeMutableRawPointer(out + 2 &* pair).assumingMemoryBound(to: __m256i_u.self), uv)
            case .planar(let cb, let cr):
                // Cb bytes and Cr bytes packed apart; packing works in 128-bit halves: 64-bit groups put back.
                let halves = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
                let u = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(_mm256_and_si256(uv, lowBytes), zero), halves)
                let v = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(_mm256_srli_epi16(uv, 8), zero), halves)
                _mm_storeu_si128(UnsafeMutableRawPointer(cb + pair).assumingMemoryBound(to: __m128i_u.self), _mm256_castsi256_si128(u))
                _mm_storeu_si128(UnsafeMutableRawPointer(cr + pair).assumingMemoryBound(to: __m128i_u.self), _mm256_castsi256_si128(v))
            }
        }
    }
}
#endif
