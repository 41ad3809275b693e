#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Quarter turns of an 8-bit plane, block by block in registers: 8x8 blocks (three rounds of
/// SSE2 unpacks), and in the AVX2 build 16x16 blocks first — two rows to a 256-bit register, the
/// same three rounds on both halves at once, one 32-bit permute (`vpermd`) joining each column's halves, and
/// whole 16-byte rows stored. Clockwise, source (sx, sy) goes to (height−1−sy, sx); counter-
/// clockwise to (sy, width−1−sx).
package enum QuarterTurn {
    /// Turns the whole blocks of the tile `x..<xEnd` × `y..<yEnd` of a `width` × `height` source;
    /// returns how far they reach, `(y, x)`: the caller turns the pixels right of `x` in rows
    /// above `y`, and the rows from `y` on.
    package static func blocks(
        _ s: UnsafePointer<UInt8>, _ sStride: Int, _ d: UnsafeMutablePointer<UInt8>, _ dStride: Int,
        x tx: Int, y ty: Int, xEnd: Int, yEnd: Int, width: Int, height: Int, clockwise: Bool
    ) -> (y: Int, x: Int) {
        #if arch(x86_64)
        var (y16, x16) = (ty, tx)
        #if FRAMEKIT_AVX2
        (y16, x16) = (ty + (yEnd - ty) / 16 * 16, tx + (xEnd - tx) / 16 * 16)
        if y16 > ty && x16 > tx {
            for by in stride(from: ty, to: y16, by: 16) {
                for bx in stride(from: tx, to: x16, by: 16) {
                    turn16(s, sStride, d, dStride, x: bx, y: by, width: width, height: height, clockwise: clockwise)
                }
            }
        } else {
            (y16, x16) = (ty, tx)
        }
        #endif
        let (y8, x8) = (ty + (yEnd - ty) / 8 * 8, tx + (xEnd - tx) / 8 * 8)
        // 8x8 blocks where the 16x16 ones did not reach: the strip to their right, then below.
        for by in stride(from: ty, to: y8, by: 8) {
            for bx in stride(from: by < y16 ? x16 : tx, to: x8, by: 8) {
                turn8(s, sStride, d, dStride, x: bx, y: by, width: width, height: height, clockwise: clockwise)
            }
        }
        return (y8, x8)
        #else
        return (ty, tx)
        #endif
    }
}

#if arch(x86_64)
extension QuarterTurn {
    /// Turns the 8x8 block at (x, y): eight 8-byte rows interleaved three times (bytes, 16-bit
    /// pairs, 32-bit quads) leave each column as half a register. Loading the rows bottom-up
    /// turns clockwise; top-down with the columns stored in reverse order, counter-clockwise.
    @inline(__always)
    static func turn8(
        _ s: UnsafePointer<UInt8>, _ sStride: Int, _ d: UnsafeMutablePointer<UInt8>, _ dStride: Int,
        x: Int, y: Int, width: Int, height: Int, clockwise: Bool
    ) {
        @inline(__always) func row(_ i: Int) -> __m128i {
            let sourceRow: Int = y &+ (clockwise ? 7 &- i : i)
            return _mm_loadl_epi64(UnsafeRawPointer(s + (sourceRow &* sStride &+ x)).assumingMemoryBound(to: __m128i_u.self))
        }
        let a0 = _mm_unpacklo_epi8(row(0), row(1))
        let a1 = _mm_unpacklo_epi8(row(2), row(3))
        let a2 = _mm_unpacklo_epi8(row(4), row(5))
        let a3 = _mm_unpacklo_epi8(row(6), row(7))
        let b0 = _mm_unpacklo_epi16(a0, a1)
        let b1 = _mm_unpackhi_epi16(a0, a1)
        let b2 = _mm_unpacklo_epi16(a2, a3)
        let b3 = _mm_unpackhi_epi16(a2, a3)
        let columns = (_mm_unpacklo_epi32(b0, b2), _mm_unpackhi_epi32(b0, b2), _mm_unpacklo_epi32(b1, b3), _mm_unpackhi_epi32(b1, b3))
        // Column j of the block becomes output row x + j (clockwise) or width-1-x-j, starting at
        // output column height-8-y (clockwise) or y.
        let dx = clockwise ? height &- 8 &- y : y
        @inline(__always) func store(_ j: Int, _ v: __m128i, high: Bool) {
            let dy: Int = clockwise ? x &+ j : width &- 1 &- x &- j
            let p = UnsafeMutableRawPointer(d + (dy &* dStride &+ dx))
            if high {
                _mm_storeh_pd(p.assumingMemoryBound(to: Double.self), _mm_castsi128_pd(v))
            } else {
                _mm_storel_epi64(p.assumingMemoryBound(to: __m128i_u.self), v)
            }
        }
        store(0, columns.0, high: false)
        store(1, columns.0, high: true)
        store(2, columns.1, high: false)
        store(3, columns.1, high: true)
        store(4, columns.2, high: false)
        store(5, columns.2, high: true)
        store(6, columns.3, high: false)
        store(7, columns.3, high: true)
    }
}
#endif

#if FRAMEKIT_AVX2
extension QuarterTurn {
    /// Turns the 16x16 block at (x, y). Register k holds block rows k and k + 8 (in its low and
    /// high halves); after the three rounds each half holds two columns of its eight rows, and a
    /// 32-bit permute puts each column's two halves together: a register is then two whole
    /// 16-byte output rows.
    @inline(__always)
    static func turn16(
        _ s: UnsafePointer<UInt8>, _ sStride: Int, _ d: UnsafeMutablePointer<UInt8>, _ dStride: Int,
        x: Int, y: Int, width: Int, height: Int, clockwise: Bool
    ) {
        // Rows bottom-up for clockwise, top-down for counter-clockwise: a first row and a step.
        let top = UnsafeRawPointer(s + (y &* sStride &+ x))
        let first = clockwise ? top + 15 &* sStride : top
        let step = clockwise ? 0 &- sStride : sStride
        @inline(__always) func rows(_ k: Int) -> __m256i {
            @inline(__always) func at(_ i: Int) -> UnsafePointer<__m128i_u> { (first + i &* step).assumingMemoryBound(to: __m128i_u.self) }
            return _mm256_loadu2_m128i(at(k &+ 8), at(k))
        }
        let r = (rows(0), rows(1), rows(2), rows(3), rows(4), rows(5), rows(6), rows(7))
        // Bytes: columns 0–7 (l) and 8–15 (h) of row pairs.
        let l0 = _mm256_unpacklo_epi8(r.0, r.1)
        let h0 = _mm256_unpackhi_epi8(r.0, r.1)
        let l1 = _mm256_unpacklo_epi8(r.2, r.3)
        let h1 = _mm256_unpackhi_epi8(r.2, r.3)
        let l2 = _mm256_unpacklo_epi8(r.4, r.5)
        let h2 = _mm256_unpackhi_epi8(r.4, r.5)
        let l3 = _mm256_unpacklo_epi8(r.6, r.7)
        let h3 = _mm256_unpackhi_epi8(r.6, r.7)
        // 16-bit pairs: four columns of rows 0–3 (top) and 4–7 (bottom) of each half.
        let c0t = _mm256_unpacklo_epi16(l0, l1)
        let c0b = _mm256_unpacklo_epi16(l2, l3) // columns 0–3
        let c1t = _mm256_unpackhi_epi16(l0, l1)
        let c1b = _mm256_unpackhi_epi16(l2, l3) // 4–7
        let c2t = _mm256_unpacklo_epi16(h0, h1)
        let c2b = _mm256_unpacklo_epi16(h2, h3) // 8–11
        let c3t = _mm256_unpackhi_epi16(h0, h1)
        let c3b = _mm256_unpackhi_epi16(h2, h3) // 12–15
        let join = _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)
        // Column c becomes output row x + c (clockwise) or width − 1 − x − c, from output column
        // height − 16 − y (clockwise) or y: a first output row and a step.
        let dx = clockwise ? height &- 16 &- y : y
        let out = UnsafeMutableRawPointer(d + ((clockwise ? x : width &- 1 &- x) &* dStride &+ dx))
        let outStep = clockwise ? dStride : 0 &- dStride
        @inline(__always) func store(_ j: Int, _ v: __m256i) {
            // Columns j and j + 1, each its 8 rows in each half: joined, then stored as output rows.
            let joined = _mm256_permutevar8x32_epi32(v, join)
            @inline(__always) func at(_ c: Int) -> UnsafeMutablePointer<__m128i_u> {
                (out + c &* outStep).assumingMemoryBound(to: __m128i_u.self)
            }
            _mm256_storeu2_m128i(at(j &+ 1), at(j), joined)
        }
        store(0, _mm256_unpacklo_epi32(c0t, c0b))
        store(2, _mm256_unpackhi_epi32(c0t, c0b))
        store(4, _mm256_unpacklo_epi32(c1t, c1b))
        store(6, _mm256_unpackhi_epi32(c1t, c1b))
        store(8, _mm256_unpacklo_epi32(c2t, c2b))
        store(10, _mm256_unpackhi_epi32(c2t, c2b))
        store(12, _mm256_unpacklo_epi32(c3t, c3b))
        store(14, _mm256_unpackhi_epi32(c3t, c3b))
    }
}
#endif
