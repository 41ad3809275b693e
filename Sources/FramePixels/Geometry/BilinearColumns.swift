import FrameCore

#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The two passes of ``Resize/bilinear(_:into:)``: a horizontal pass that reads each output
/// column's pair of source pixels (a gather, 8 columns a step with SSE2) and a vertical blend
/// of two interpolated rows (16 values a step). The scalar code computes the same integers.
struct BilinearColumns {
    let lefts: UnsafePointer<Int32>
    /// (2048 − w, w) per output column.
    let weights: UnsafePointer<Int16>
    let count: Int, channels: Int, sourceWidth: Int

    /// One source row → `count · channels` values of 128 × the interpolated pixel.
    func interpolate(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int16>) {
        var x = 0
        #if arch(x86_64)
        if channels == 1 && sourceWidth >= 2 {
            let zero = _mm_setzero_si128()
            let w = UnsafeRawPointer(weights)
            @inline(__always) func pair(_ i: Int) -> UInt32 {
                UInt32(UnsafeRawPointer(row).loadUnaligned(fromByteOffset: Int(lefts[i]), as: UInt16.self))
            }
            @inline(__always) func pairs(_ i: Int) -> Int32 { Int32(bitPattern: pair(i) | pair(i + 1) &<< 16) }
            while x + 8 <= count {
                // Eight (left, right) byte pairs gathered (two to a 32-bit register before they
                // enter the vector: fewer shuffles), widened to 16 bits, multiplied by their
                // weights and summed in pairs (pmaddwd): the exact 32-bit sums.
                let pairs = _mm_set_epi32(pairs(x + 6), pairs(x + 4), pairs(x + 2), pairs(x))
                let lo = _mm_madd_epi16(
                    _mm_unpacklo_epi8(pairs, zero),
                    _mm_loadu_si128(w.advanced(by: 4 * x).assumingMemoryBound(to: __m128i_u.self)))
                let hi = _mm_madd_epi16(
                    _mm_unpackhi_epi8(pairs, zero),
                    _mm_loadu_si128(w.advanced(by: 4 * x + 16).assumingMemoryBound(to: __m128i_u.self)))
                _mm_storeu_si128(
                    UnsafeMutableRawPointer(out + x).assumingMemoryBound(to: __m128i_u.self),
                    _mm_packs_epi32(_mm_srai_epi32(lo, 4), _mm_srai_epi32(hi, 4)))
                x += 8
            }
        }
        #endif
        let c = channels
        let last = sourceWidth - 1
        while x < count {
            let left = Int(lefts[x]) * c
            let right = min(Int(lefts[x]) + 1, last) * c
            let a = Int32(weights[2 * x])
            let b = Int32(weights[2 * x + 1])
            for k in 0..<c {
                out[x &* c &+ k] = Int16(truncatingIfNeeded: (Int32(row[left &+ k]) &* a &+ Int32(row[right &+ k]) &* b) &>> 4)
            }
            x += 1
        }
    }

    /// Output = ((top · a) >> 16 + (bottom · b) >> 16 + 2) >> 2, clamped to a byte; a + b = 2048.
    static func blend(
        _ top: UnsafePointer<Int16>, _ a: Int16, _ bottom: UnsafePointer<Int16>, _ b: Int16,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        var i = 0
        #if arch(x86_64)
        let wa = _mm_set1_epi16(a)
        let wb = _mm_set1_epi16(b)
        let two = _mm_set1_epi16(2)
        @inline(__always) func rows(_ j: Int) -> __m128i {
            let t = _mm_loadu_si128(UnsafeRawPointer(top + j).assumingMemoryBound(to: __m128i_u.self))
            let u = _mm_loadu_si128(UnsafeRawPointer(bottom + j).assumingMemoryBound(to: __m128i_u.self))
            return _mm_srai_epi16(_mm_adds_epi16(_mm_adds_epi16(_mm_mulhi_epi16(t, wa), _mm_mulhi_epi16(u, wb)), two), 2)
        }
        while i + 16 <= count {
            _mm_storeu_si128(
                UnsafeMutableRawPointer(out + i).assumingMemoryBound(to: __m128i_u.self),
                _mm_packus_epi16(rows(i), rows(i + 8)))
            i += 16
        }
        #endif
        @inline(__always) func high(_ x: Int16, _ w: Int16) -> Int32 { (Int32(x) &* Int32(w)) &>> 16 }
        while i < count {
            out[i] = UInt8(clamping: (high(top[i], a) &+ high(bottom[i], b) &+ 2) &>> 2)
            i += 1
        }
    }
}
