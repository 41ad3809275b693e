#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Area resize of one 8-bit channel by exactly 3/8 each way, three output rows from eight source
/// rows at a time. Each output covers 8/3 source pixels an axis, so with weights in eighths —
/// (3, 3, 2), (1, 3, 3, 1), (2, 3, 3) for the three outputs of every eight pixels — the area sum
/// S = Σ wy · wx · pixel is an exact integer of at most 64 · 255, and the mean (S + 32) >> 6: the
/// same integers as the general area resize (whose 12-bit weights are these eighths exactly).
///
/// The AVX2 build goes horizontal first, all in registers: per source row a 32-byte load (16
/// bytes, two groups of eight, to a 128-bit lane), two `pshufb` that set each output's taps
/// side by side in two pairs and two `pmaddubsw` by their weights (six outputs a lane, two
/// slots zero); then the three rows' vertical sums by multiplies and adds. The portable code
/// computes the same formula pixel by pixel; the baseline build's general resize is faster
/// than it and gives the same bytes, so it is used there only off x86.
package enum ThreeEighthRows {
    /// Output rows 3k…3k+2 (`out`, `outStride` apart, `count` bytes each, `count` a multiple of
    /// 3) from source rows 8k…8k+7 (`rows`, `rowStride` apart, 8 · count / 3 bytes each).
    package static func resize(
        _ rows: UnsafePointer<UInt8>, rowStride: Int, into out: UnsafeMutablePointer<UInt8>, outStride: Int, count: Int
    ) {
        var x = 0
        #if FRAMEKIT_AVX2
        x = wideSteps(rows, rowStride: rowStride, into: out, outStride: outStride, count: count)
        #endif
        // Per phase (an output's place among the three of its eight pixels): its first pixel and weights.
        let weights: [[Int32]] = [[3, 3, 2], [1, 3, 3, 1], [2, 3, 3]]
        let first = [0, 2, 5]
        while x < count {
            let (group, phase) = (x / 3, x % 3)
            for y in 0..<3 {
                var sum: Int32 = 32
                for (i, wy) in weights[y].enumerated() {
                    let row = rows + ((first[y] &+ i) &* rowStride &+ 8 &* group &+ first[phase])
                    for (j, wx) in weights[phase].enumerated() { sum &+= wy &* wx &* Int32(row[j]) }
                }
                out[y &* outStride &+ x] = UInt8(truncatingIfNeeded: sum &>> 6)
            }
            x &+= 1
        }
    }

    #if FRAMEKIT_AVX2
    /// Per 128-bit lane (16 source bytes, six outputs in slots 0…5): each output's taps as two
    /// pairs of bytes — shuffle A and its weights, shuffle B and its — a lone tap paired with a
    /// zero byte (mask 0x80), slots 6 and 7 all zero.
    static let tables: [UInt8] = {
        let z: UInt8 = 0x80
        let a: [UInt8] = [0, 1, 2, 3, 5, 6, 8, 9, 10, 11, 13, 14, z, z, z, z]
        let wa: [UInt8] = [3, 3, 1, 3, 2, 3, 3, 3, 1, 3, 2, 3, 0, 0, 0, 0]
        let b: [UInt8] = [2, z, 4, 5, 7, z, 10, z, 12, 13, 15, z, z, z, z, z]
        let wb: [UInt8] = [2, 0, 3, 1, 3, 0, 2, 0, 3, 1, 3, 0, 0, 0, 0, 0]
        return [a, wa, b, wb].flatMap { $0 + $0 } // both lanes alike
    }()

    /// Steps of 12 outputs (32 source bytes) a row, each writing 14 bytes (two 8-byte stores of
    /// six outputs, the second overwriting the first's two spare bytes), while those fit the row;
    /// returns the outputs done.
    @inline(__always)
    static func wideSteps(
        _ rows: UnsafePointer<UInt8>, rowStride: Int, into out: UnsafeMutablePointer<UInt8>, outStride: Int, count: Int
    ) -> Int {
        let t = tables
        let (maskA, weightA, maskB, weightB) = t.withUnsafeBytes { raw in
            func load(_ k: Int) -> __m256i {
                _mm256_loadu_si256(raw.baseAddress!.advanced(by: 32 &* k).assumingMemoryBound(to: __m256i_u.self))
            }
            return (load(0), load(1), load(2), load(3))
        }
        let three = _mm256_set1_epi16(3)
        let half = _mm256_set1_epi16(32)
        @inline(__always) func horizontal(_ r: Int, _ s: Int) -> __m256i {
            let v = _mm256_loadu_si256(UnsafeRawPointer(rows + (r &* rowStride &+ s)).assumingMemoryBound(to: __m256i_u.self))
            return _mm256_add_epi16(
                _mm256_maddubs_epi16(_mm256_shuffle_epi8(v, maskA), weightA), _mm256_maddubs_epi16(_mm256_shuffle_epi8(v, maskB), weightB))
        }
        @inline(__always) func store(_ sum: __m256i, _ at: UnsafeMutablePointer<UInt8>) {
            let means = _mm256_srli_epi16(_mm256_add_epi16(sum, half), 6)
            // Bytes: lane 0's six (and two spare) then lane 1's, in the low 128 bits.
            let bytes = _mm256_castsi256_si128(
                _mm256_permutevar8x32_epi32(_mm256_packus_epi16(means, means), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)))
            _mm_storel_epi64(UnsafeMutableRawPointer(at).assumingMemoryBound(to: __m128i_u.self), bytes)
            _mm_storel_epi64(UnsafeMutableRawPointer(at + 6).assumingMemoryBound(to: __m128i_u.self), _mm_unpackhi_epi64(bytes, bytes))
        }
        @inline(__always) func step(_ x: Int) {
            let s = x / 3 &* 8
            let h2 = horizontal(2, s)
            let h5 = horizontal(5, s)
            @inline(__always) func sum(_ a: Int, _ b: Int, _ c: __m256i, _ d: __m256i) -> __m256i {
                _mm256_add_epi16(_mm256_mullo_epi16(_mm256_add_epi16(horizontal(a, s), horizontal(b, s)), three), _mm256_add_epi16(c, d))
            }
            store(sum(0, 1, h2, h2), out + x)
            store(sum(3, 4, h2, h5), out + (outStride &+ x))
            store(sum(6, 7, h5, h5), out + (2 &* outStride &+ x))
        }
        var x = 0
        while x &+ 14 <= count {
            step(x)
            x &+= 12
        }
        // One more step ending where the row does (less its two spare bytes), overlapping the
        // last: outputs computed twice come out the same; the spare bytes go to the caller's tail.
        let last = (count &- 14) / 3 &* 3
        if count >= 14 && last &+ 12 > x {
            step(last)
            x = last &+ 12
        }
        return x
    }
    #endif
}
