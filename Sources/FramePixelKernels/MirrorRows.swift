#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Left-right mirroring of one row of 1-, 2- or 4-byte pixels, a vector at a time from both
/// ends. The portable step reverses `SIMD` lanes with constant indices (`pshufd`/`pshufb`-like
/// shuffles); the AVX2 build first reverses 32 bytes a vector (`vpshufb` within each 128-bit
/// lane, then `vpermd` swapping the lanes — one `vpermd` for 4-byte pixels).
package enum MirrorRows {
    package static func reverse(_ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, count: Int, bytesPerPixel: Int) {
        var (d, n) = (d, count)
        #if FRAMEKIT_AVX2
        if bytesPerPixel == 1 || bytesPerPixel == 2 || bytesPerPixel == 4 {
            // The output's first `done` pixels are the source's last; what is left is the mirror
            // of the source's first n − done pixels into the output's rest.
            let done = wide(s, d, n, bytesPerPixel)
            (d, n) = (d + done &* bytesPerPixel, n &- done)
        }
        #endif
        switch bytesPerPixel {
        case 1: reverse(s, d, n, as: SIMD16<UInt8>.self)
        case 2: reverse(s, d, n, as: SIMD8<UInt16>.self)
        case 4: reverse(s, d, n, as: SIMD4<UInt32>.self)
        default:
            for x in 0..<n {
                (d + bytesPerPixel &* (n &- 1 &- x)).copyMemory(from: s + bytesPerPixel &* x, byteCount: bytesPerPixel)
            }
        }
    }

    @inline(__always)
    static func reverse<V: SIMD>(_ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, _ n: Int, as: V.Type)
    where V.Scalar: FixedWidthInteger {
        let size = MemoryLayout<V.Scalar>.size
        let lanes = V.scalarCount
        @inline(__always) func one(_ x: Int) {
            let v = s.loadUnaligned(fromByteOffset: x &* size, as: V.self)
            var r = V()
            for i in 0..<lanes { r[i] = v[lanes &- 1 &- i] }
            d.storeBytes(of: r, toByteOffset: (n &- x &- lanes) &* size, as: V.self)
        }
        var x = vectorSteps(from: 0, to: n, by: lanes, one)
        while x < n {
            d.storeBytes(
                of: s.loadUnaligned(fromByteOffset: x &* size, as: V.Scalar.self), toByteOffset: (n &- 1 &- x) &* size, as: V.Scalar.self)
            x &+= 1
        }
    }
}

#if FRAMEKIT_AVX2
extension MirrorRows {
    /// 32 bytes a vector, four vectors a step; returns the pixels done.
    static func wide(_ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, _ n: Int, _ size: Int) -> Int {
        let bytes = n &* size
        // Within each lane, pixels reversed (byte indices from the lane's end, per pixel size).
        let inLane: __m256i =
            size == 1
            ? _mm256_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
            : _mm256_setr_epi8(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1, 14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1)
        let swap = _mm256_setr_epi32(4, 5, 6, 7, 0, 1, 2, 3)
        let whole = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0)
        // Reading from the source's end and writing the output forwards (as libyuv does): the
        // stores ascend, which measured faster than descending ones.
        @inline(__always) func one(_ o: Int) {
            let v = _mm256_loadu_si256(s.advanced(by: bytes &- o &- 32).assumingMemoryBound(to: __m256i_u.self))
            let r = size == 4 ? _mm256_permutevar8x32_epi32(v, whole) : _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, inLane), swap)
            _mm256_storeu_si256(d.advanced(by: o).assumingMemoryBound(to: __m256i_u.self), r)
        }
        return vectorSteps(from: 0, to: bytes, by: 32, one) / size
    }
}
#endif
