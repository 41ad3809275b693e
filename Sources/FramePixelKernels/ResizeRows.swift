#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// The vertical halves of the resizes, one output row at a time: the bilinear blend of two
/// interpolated rows, the 2x2 box mean, and the weighted sum of an area resize's rows. The
/// blend and the mean have an AVX2 step (32 outputs) in the AVX2 build, then SSE2 or portable
/// code; the area sums are portable loops the compiler vectorises (256-bit in the AVX2 build).
/// Every path computes the same integers.
package enum ResizeRows {
    /// Bilinear: out = ((top · a) >> 16 + (bottom · b) >> 16 + 2) >> 2, clamped to a byte, with
    /// a + b = 2048 and rows of 128 × the interpolated pixels (`HorizontalTaps.sumsShifted`):
    /// OpenCV's own fixed-point blend (`pmulhw`), so results match it.
    package static func blend(
        _ top: UnsafePointer<Int16>, _ a: Int16, _ bottom: UnsafePointer<Int16>, _ b: Int16,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        var i = 0
        #if FRAMEKIT_AVX2
        do {
            let wa = _mm256_set1_epi16(a)
            let wb = _mm256_set1_epi16(b)
            let two = _mm256_set1_epi16(2)
            @inline(__always) func rows(_ j: Int) -> __m256i {
                let t = _mm256_loadu_si256(UnsafeRawPointer(top + j).assumingMemoryBound(to: __m256i_u.self))
                let u = _mm256_loadu_si256(UnsafeRawPointer(bottom + j).assumingMemoryBound(to: __m256i_u.self))
                return _mm256_srai_epi16(
                    _mm256_adds_epi16(_mm256_adds_epi16(_mm256_mulhi_epi16(t, wa), _mm256_mulhi_epi16(u, wb)), two), 2)
            }
            while i + 32 <= count {
                storePacked(_mm256_packus_epi16(rows(i), rows(i + 16)), at: out + i)
                i += 32
            }
        }
        #endif
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
                UnsafeMutableRawPointer(out + i).assumingMemoryBound(to: __m128i_u.self), _mm_packus_epi16(rows(i), rows(i + 8)))
            i += 16
        }
        #endif
        @inline(__always) func high(_ x: Int16, _ w: Int16) -> Int32 { (Int32(x) &* Int32(w)) &>> 16 }
        while i < count {
            out[i] = UInt8(clamping: (high(top[i], a) &+ high(bottom[i], b) &+ 2) &>> 2)
            i += 1
        }
    }

    /// The 2x2 box mean: out[i] = (r0[2i] + r0[2i+1] + r1[2i] + r1[2i+1] + 2) >> 2.
    package static func halve(_ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, count: Int) {
        var i = 0
        #if FRAMEKIT_AVX2
        // Pairs summed by `pmaddubsw` against ones (16-bit sums), the rows added, rounded.
        let ones = _mm256_set1_epi8(1)
        let two = _mm256_set1_epi16(2)
        @inline(__always) func means(_ j: Int) -> __m256i {
            let a = _mm256_loadu_si256(UnsafeRawPointer(r0 + 2 &* j).assumingMemoryBound(to: __m256i_u.self))
            let b = _mm256_loadu_si256(UnsafeRawPointer(r1 + 2 &* j).assumingMemoryBound(to: __m256i_u.self))
            let sum = _mm256_add_epi16(_mm256_maddubs_epi16(a, ones), _mm256_maddubs_epi16(b, ones))
            return _mm256_srli_epi16(_mm256_add_epi16(sum, two), 2)
        }
        while i + 32 <= count {
            storePacked(_mm256_packus_epi16(means(i), means(i + 16)), at: out + i)
            i += 32
        }
        #endif
        // Each pixel pair read as one 16-bit word keeps the loads contiguous: the compiler
        // vectorises this.
        let a = UnsafeRawPointer(r0)
        let b = UnsafeRawPointer(r1)
        while i < count {
            let p = a.loadUnaligned(fromByteOffset: 2 &* i, as: UInt16.self)
            let q = b.loadUnaligned(fromByteOffset: 2 &* i, as: UInt16.self)
            let sum = (p & 0xFF) &+ (p &>> 8) &+ (q & 0xFF) &+ (q &>> 8) &+ 2
            out[i] = UInt8(truncatingIfNeeded: sum &>> 2)
            i += 1
        }
    }

    /// `halve` over `rows` output rows of a plane: one call a plane, where a call a row cost a
    /// tenth of a 640-pixel row's time in the dispatch and the pointer arithmetic around it.
    package static func halvePlane(
        _ source: UnsafePointer<UInt8>, sourceStride: Int, into out: UnsafeMutablePointer<UInt8>, outStride: Int, count: Int, rows: Int
    ) {
        var (r0, o) = (source, out)
        for _ in 0..<rows {
            halve(r0, r0 + sourceStride, into: o, count: count)
            r0 += 2 &* sourceStride
            o += outStride
        }
    }

    /// The 2x2 box mean of interleaved pixels of `channels` bytes (3 or 4): each output byte is
    /// (the same channel of two neighbouring pixels in `r0` and the two below them in `r1`,
    /// summed, + 2) >> 2, for `count` output pixels. `sums` is scratch for
    /// 2 · channels · count + 4 values. The rows are summed first (a loop the compiler
    /// vectorises), then each output pixel's channels come from two 64-bit loads of those
    /// sums added as four 16-bit lanes (at most 1022 a lane: no carry between them).
    package static func halvePixels(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, count: Int, channels: Int,
        sums: UnsafeMutablePointer<UInt16>
    ) {
        let n = 2 &* channels &* count
        for i in 0..<n { sums[i] = UInt16(r0[i]) &+ UInt16(r1[i]) }
        for i in n..<(n &+ 4) { sums[i] = 0 }
        let raw = UnsafeRawPointer(sums)
        let pixelBytes = 2 &* channels // a pixel's sums, in bytes
        for x in 0..<count {
            let at = 2 &* pixelBytes &* x
            let a = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            let b = raw.loadUnaligned(fromByteOffset: at &+ pixelBytes, as: UInt64.self)
            // A lane's low byte after the shift is its own mean: the bits the next lane shifts
            // in land above it.
            let mean = (a &+ b &+ 0x0002_0002_0002_0002) &>> 2
            let o = out + channels &* x
            o[0] = UInt8(truncatingIfNeeded: mean)
            o[1] = UInt8(truncatingIfNeeded: mean &>> 16)
            o[2] = UInt8(truncatingIfNeeded: mean &>> 32)
            if channels == 4 { o[3] = UInt8(truncatingIfNeeded: mean &>> 48) }
        }
    }

    /// An area resize's vertical pass over horizontal sums: `acc = (start ? 0 : acc) + weight · row`.
    package static func accumulate(
        _ row: UnsafePointer<Int32>, weight: UInt32, into acc: UnsafeMutablePointer<UInt32>, count: Int, start: Bool
    ) {
        let r = UnsafeRawPointer(row).assumingMemoryBound(to: UInt32.self)
        if start {
            for i in 0..<count { acc[i] = r[i] &* weight }
        } else {
            for i in 0..<count { acc[i] &+= r[i] &* weight }
        }
    }

    /// An area resize's whole vertical pass for one output row that reads at most four rows of
    /// horizontal sums: Σ weight · row with 24 fractional bits, rounded to bytes, in one pass —
    /// the same integers as `accumulate` over the rows and then `finish`, without the
    /// accumulator's loads and stores (the two took a third of a 3/8 resize).
    package static func weightedRows(
        _ rows: UnsafePointer<UnsafePointer<Int32>>, _ weights: UnsafePointer<UInt32>, taps: Int,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        @inline(__always) func row(_ k: Int) -> UnsafePointer<UInt32> { UnsafeRawPointer(rows[k]).assumingMemoryBound(to: UInt32.self) }
        @inline(__always) func byte(_ sum: UInt32) -> UInt8 { UInt8(truncatingIfNeeded: (sum &+ (1 << 23)) &>> 24) }
        switch taps {
        case 1:
            let (r0, w0) = (row(0), weights[0])
            for i in 0..<count { out[i] = byte(r0[i] &* w0) }
        case 2:
            let (r0, r1, w0, w1) = (row(0), row(1), weights[0], weights[1])
            for i in 0..<count { out[i] = byte(r0[i] &* w0 &+ r1[i] &* w1) }
        case 3:
            let (r0, r1, r2) = (row(0), row(1), row(2))
            let (w0, w1, w2) = (weights[0], weights[1], weights[2])
            for i in 0..<count { out[i] = byte(r0[i] &* w0 &+ r1[i] &* w1 &+ r2[i] &* w2) }
        default:
            precondition(taps == 4, "weightedRows takes 1 to 4 rows")
            let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3))
            let (w0, w1, w2, w3) = (weights[0], weights[1], weights[2], weights[3])
            for i in 0..<count { out[i] = byte(r0[i] &* w0 &+ r1[i] &* w1 &+ r2[i] &* w2 &+ r3[i] &* w3) }
        }
    }

    /// Sums with 24 fractional bits (two 12-bit weights) → rounded bytes.
    package static func finish(_ acc: UnsafePointer<UInt32>, into out: UnsafeMutablePointer<UInt8>, count: Int) {
        for i in 0..<count { out[i] = UInt8(truncatingIfNeeded: (acc[i] &+ (1 << 23)) &>> 24) }
    }
}
