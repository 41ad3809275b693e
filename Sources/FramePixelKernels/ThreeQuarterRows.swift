#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Bilinear resize of one 8-bit channel by exactly 3/4 each way, three output rows from four
/// source rows at a time. At that ratio (pixel centres aligned) every output sits 1/6, 1/2 or 5/6
/// of the way between two source pixels on each axis, so with weights in sixths the sum
/// S = Σ wy · wx · pixel (weights 5+1, 3+3 or 1+5 per axis) is an exact integer of at most
/// 36 · 255, and each output is S / 36 rounded (halves up): the exact bilinear value, rounded
/// once. (The general path's 11-bit weights and truncating shifts, OpenCV's arithmetic, come
/// within one step of it; this is never more than one step from that either.)
///
/// Exact sums do not depend on the order of the passes, so the two builds take different ones
/// and give the same bytes. The AVX2 build goes horizontal first, 48 outputs of all three rows
/// a step, in registers: per source row and 128-bit lane one 16-byte load, one `pshufb` that
/// sets each output's two source bytes side by side, one `pmaddubsw` by their weights; then the
/// three rows' vertical sums by shifts and adds, and ÷ 36 as a high multiply. The baseline build
/// goes vertical first — a loop over the four rows' columns the compiler vectorises — then sums
/// each output's pair of columns.
package enum ThreeQuarterRows {
    /// Output rows 3k, 3k+1, 3k+2 (`o0`…`o2`, `count` bytes each, `count` a multiple of 3) from
    /// source rows 4k…4k+3 (`r0`…`r3`, 4 · count / 3 bytes each). `scratch`: at least
    /// `scratchCount(count)` 16-bit values (the baseline's vertical sums; the AVX2 build's
    /// padded copy for a partial last step).
    package static func resize(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, _ r2: UnsafePointer<UInt8>, _ r3: UnsafePointer<UInt8>,
        into o0: UnsafeMutablePointer<UInt8>, _ o1: UnsafeMutablePointer<UInt8>, _ o2: UnsafeMutablePointer<UInt8>,
        count: Int, scratch: UnsafeMutablePointer<UInt16>
    ) {
        #if FRAMEKIT_AVX2
        let done = wideSteps(r0, r1, r2, r3, into: o0, o1, o2, count: count)
        if done == count { return }
        // The last, partial step: its four rows' rest copied into zero-padded 64-byte rows (the
        // step reads 64 source bytes a row), its outputs through 48-byte rows, the needed ones kept.
        let rest = count &- done
        let sourceStart = done / 3 &* 4
        let sourceRest = rest / 3 &* 4
        let padded = UnsafeMutableRawPointer(scratch).bindMemory(to: UInt8.self, capacity: 4 &* 64 &+ 3 &* 48)
        padded.update(repeating: 0, count: 4 &* 64)
        padded.update(from: r0 + sourceStart, count: sourceRest)
        (padded + 64).update(from: r1 + sourceStart, count: sourceRest)
        (padded + 128).update(from: r2 + sourceStart, count: sourceRest)
        (padded + 192).update(from: r3 + sourceStart, count: sourceRest)
        let outs = padded + 4 &* 64
        _ = wideSteps(padded, padded + 64, padded + 128, padded + 192, into: outs, outs + 48, outs + 96, count: 48)
        (o0 + done).update(from: outs, count: rest)
        (o1 + done).update(from: outs + 48, count: rest)
        (o2 + done).update(from: outs + 96, count: rest)
        #else
        verticalFirst(r0, r1, r2, r3, into: o0, o1, o2, count: count, sums: scratch)
        #endif
    }

    package static func scratchCount(_ count: Int) -> Int { max(count / 3 * 4 * 3, 256) }

    /// S / 36 rounded, S ≤ 36 · 255: (S + 18) · 14564 >> 19 is exact over that range (14564 / 2^19
    /// exceeds 1/36 by under 1e-6, too little to carry any S + 18 ≤ 9198 past an integer).
    @inline(__always)
    package static func divide36(_ s: UInt32) -> UInt8 { UInt8(truncatingIfNeeded: ((s &+ 18) &* 14564) &>> 19) }

    /// The portable path: per column the three output rows' vertical sums (5·r0 + r1,
    /// 3·(r1 + r2), r2 + 5·r3), then per output the horizontal pair of them.
    static func verticalFirst(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, _ r2: UnsafePointer<UInt8>, _ r3: UnsafePointer<UInt8>,
        into o0: UnsafeMutablePointer<UInt8>, _ o1: UnsafeMutablePointer<UInt8>, _ o2: UnsafeMutablePointer<UInt8>,
        count: Int, sums: UnsafeMutablePointer<UInt16>
    ) {
        let width = count / 3 &* 4
        let (v0, v1, v2) = (sums, sums + width, sums + 2 &* width)
        for i in 0..<width {
            let (a, b, c, d) = (UInt16(r0[i]), UInt16(r1[i]), UInt16(r2[i]), UInt16(r3[i]))
            v0[i] = a &* 5 &+ b
            v1[i] = (b &+ c) &* 3
            v2[i] = c &+ d &* 5
        }
        @inline(__always) func horizontal(_ v: UnsafeMutablePointer<UInt16>, _ out: UnsafeMutablePointer<UInt8>) {
            var j = 0
            #if arch(x86_64)
            // Four groups (12 outputs) a step in SSE2, per group's 64 bits (a, b, c, d):
            // `pmaddwd` by (5, 1, 1, 5) gives 5a + b and c + 5d, and of the group shifted down a
            // word by (3, 3, 0, 0) gives 3b + 3c; packed to 16 bits and rounded as `divide36`, each
            // group's three bytes meet in a 32-bit lane, and 64-bit shifts close the gap between
            // two lanes: two 8-byte stores of 6 bytes each (the second overwrites the first's
            // last two; the last two bytes written belong to the next step, hence the bound).
            let outer = _mm_setr_epi16(5, 1, 1, 5, 5, 1, 1, 5)
            let middle = _mm_setr_epi16(3, 3, 0, 0, 3, 3, 0, 0)
            let bias = _mm_set1_epi16(18)
            let reciprocal = _mm_set1_epi16(14564)
            let low24 = _mm_set1_epi64x(0xFF_FFFF)
            @inline(__always) func rounded(_ s: __m128i) -> __m128i {
                _mm_srli_epi16(_mm_mulhi_epu16(_mm_add_epi16(s, bias), reciprocal), 3)
            }
            while 3 &* j &+ 14 <= count {
                let x0 = _mm_loadu_si128(UnsafeRawPointer(v + 4 &* j).assumingMemoryBound(to: __m128i_u.self))
                let x1 = _mm_loadu_si128(UnsafeRawPointer(v + (4 &* j &+ 8)).assumingMemoryBound(to: __m128i_u.self))
                let ends = rounded(_mm_packs_epi32(_mm_madd_epi16(x0, outer), _mm_madd_epi16(x1, outer)))
                let mids = rounded(
                    _mm_packs_epi32(
                        _mm_madd_epi16(_mm_srli_epi64(x0, 16), middle), _mm_madd_epi16(_mm_srli_epi64(x1, 16), middle)))
                let groups = _mm_or_si128(ends, _mm_slli_epi32(mids, 8)) // per 32 bits: q0, q1, q2, 0
                let pairs = _mm_or_si128(_mm_and_si128(groups, low24), _mm_slli_epi64(_mm_srli_epi64(groups, 32), 24))
                _mm_storel_epi64(UnsafeMutableRawPointer(out + 3 &* j).assumingMemoryBound(to: __m128i_u.self), pairs)
                _mm_storel_epi64(
                    UnsafeMutableRawPointer(out + (3 &* j &+ 6)).assumingMemoryBound(to: __m128i_u.self), _mm_unpackhi_epi64(pairs, pairs))
                j &+= 4
            }
            #endif
            while j < count / 3 {
                let (a, b, c, d) = (UInt32(v[4 &* j]), UInt32(v[4 &* j &+ 1]), UInt32(v[4 &* j &+ 2]), UInt32(v[4 &* j &+ 3]))
                out[3 &* j] = divide36(a &* 5 &+ b)
                out[3 &* j &+ 1] = divide36((b &+ c) &* 3)
                out[3 &* j &+ 2] = divide36(c &+ d &* 5)
                j &+= 1
            }
        }
        horizontal(v0, o0)
        horizontal(v1, o1)
        horizontal(v2, o2)
    }

    #if FRAMEKIT_AVX2
    /// Per 48-output step, the six 128-bit lanes' (8 outputs each) 16-byte load offsets within
    /// the step's 64 source bytes, the shuffles that put each output's two source bytes side by
    /// side, and their weights in sixths as signed bytes — the same for every step.
    struct Lanes {
        let offsets: [Int]
        let masks: [UInt8] // 6 lanes × 16
        let weights: [UInt8] // 6 lanes × 16
        let weights5: [UInt8] // the same, times 5

        init() {
            var offsets: [Int] = []
            var masks: [UInt8] = []
            var weights: [UInt8] = []
            for lane in 0..<6 {
                // Start at the first output's group, but never past the step's 64 bytes.
                let offset = min(8 * lane / 3 * 4, 48)
                offsets.append(offset)
                for j in 0..<8 {
                    let q = 8 * lane + j
                    let (group, phase) = (q / 3, q % 3)
                    let left = 4 * group + phase
                    masks += [UInt8(left - offset), UInt8(left + 1 - offset)]
                    weights += [[5, 1], [3, 3], [1, 5]][phase]
                }
            }
            (self.offsets, self.masks, self.weights) = (offsets, masks, weights)
            weights5 = weights.map { $0 * 5 }
        }
    }

    static let lanes = Lanes()

    /// Whole 48-output steps; returns the outputs done.
    @inline(__always)
    static func wideSteps(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, _ r2: UnsafePointer<UInt8>, _ r3: UnsafePointer<UInt8>,
        into o0: UnsafeMutablePointer<UInt8>, _ o1: UnsafeMutablePointer<UInt8>, _ o2: UnsafeMutablePointer<UInt8>,
        count: Int
    ) -> Int {
        let l = lanes
        @inline(__always) func pair(_ a: UnsafeRawPointer, _ lane: Int) -> __m256i {
            _mm256_loadu_si256(a.advanced(by: 32 &* lane).assumingMemoryBound(to: __m256i_u.self))
        }
        let (masks, weights, weights5) = l.masks.withUnsafeBytes { m in
            l.weights.withUnsafeBytes { w in
                l.weights5.withUnsafeBytes { w5 in
                    let (m, w, w5) = (m.baseAddress!, w.baseAddress!, w5.baseAddress!)
                    return (
                        (pair(m, 0), pair(m, 1), pair(m, 2)), (pair(w, 0), pair(w, 1), pair(w, 2)), (pair(w5, 0), pair(w5, 1), pair(w5, 2))
                    )
                }
            }
        }
        let offsets = (l.offsets[0], l.offsets[1], l.offsets[2], l.offsets[3], l.offsets[4], l.offsets[5])
        // Rows 0 and 2: (S + 18) · 14564 >> 19 (`divide36`); row 1's S is 3 · (h1 + h2), and
        // (3t + 18) · 14564 = (t + 6) · 43692, which still fits a 16-bit multiplier.
        let (bias, reciprocal) = (_mm256_set1_epi16(18), _mm256_set1_epi16(14564))
        let (bias3, reciprocal3) = (_mm256_set1_epi16(6), _mm256_set1_epi16(Int16(bitPattern: 43692)))
        // One source row's horizontal sums for one of the step's three registers (k: outputs
        // 16k…16k+15), at the step's first source byte, by weights in sixths (`times5`: five
        // times those, for the outer rows, which only ever count five times).
        @inline(__always) func horizontal(_ row: UnsafePointer<UInt8>, _ k: Int, times5: Bool = false) -> __m256i {
            @inline(__always) func load(_ lo: Int, _ hi: Int) -> __m256i {
                _mm256_loadu2_m128i(UnsafePointer<__m128i_u>(OpaquePointer(row + hi)), UnsafePointer<__m128i_u>(OpaquePointer(row + lo)))
            }
            switch k {
            case 0: return _mm256_maddubs_epi16(_mm256_shuffle_epi8(load(offsets.0, offsets.1), masks.0), times5 ? weights5.0 : weights.0)
            case 1: return _mm256_maddubs_epi16(_mm256_shuffle_epi8(load(offsets.2, offsets.3), masks.1), times5 ? weights5.1 : weights.1)
            default:
                return _mm256_maddubs_epi16(_mm256_shuffle_epi8(load(offsets.4, offsets.5), masks.2), times5 ? weights5.2 : weights.2)
            }
        }
        @inline(__always) func rounded(_ s: __m256i) -> __m256i {
            _mm256_srli_epi16(_mm256_mulhi_epu16(_mm256_add_epi16(s, bias), reciprocal), 3)
        }
        @inline(__always) func rounded3(_ t: __m256i) -> __m256i {
            _mm256_srli_epi16(_mm256_mulhi_epu16(_mm256_add_epi16(t, bias3), reciprocal3), 3)
        }
        // An output row's 48 bytes from its three registers of 16-bit values (lanes [0–7 | 8–15],
        // [16–23 | 24–31], [32–39 | 40–47]), each made when asked: rows are finished one at a
        // time, so that only the sums a later row reads stay in registers.
        @inline(__always) func store(_ out: UnsafeMutablePointer<UInt8>, _ value: (Int) -> __m256i) {
            storePacked(_mm256_packus_epi16(value(0), value(1)), at: out)
            let c = value(2)
            let cc = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(c, c), _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7))
            _mm_storeu_si128(UnsafeMutableRawPointer(out + 32).assumingMemoryBound(to: __m128i_u.self), _mm256_castsi256_si128(cc))
        }
        typealias Three = (__m256i, __m256i, __m256i)
        @inline(__always) func at(_ t: Three, _ k: Int) -> __m256i { k == 0 ? t.0 : k == 1 ? t.1 : t.2 }
        @inline(__always) func kept(_ t: inout Three, _ k: Int, _ v: __m256i) -> __m256i {
            switch k {
            case 0: t.0 = v
            case 1: t.1 = v
            default: t.2 = v
            }
            return v
        }
        var x = 0
        while x &+ 48 <= count {
            let s = x / 3 &* 4
            let (a, b, c, d) = (r0 + s, r1 + s, r2 + s, r3 + s)
            var h1: Three = (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256())
            store(o0 + x) { k in rounded(_mm256_add_epi16(horizontal(a, k, times5: true), kept(&h1, k, horizontal(b, k)))) }
            var h2 = h1
            store(o1 + x) { k in rounded3(_mm256_add_epi16(at(h1, k), kept(&h2, k, horizontal(c, k)))) }
            store(o2 + x) { k in rounded(_mm256_add_epi16(at(h2, k), horizontal(d, k, times5: true))) }
            x &+= 48
        }
        return x
    }
    #endif
}
