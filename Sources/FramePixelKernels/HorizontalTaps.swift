#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// A horizontal resampling pass: each output pixel the sum of `taps` source pixels times 16-bit
/// weights, exact in 32 bits. Bilinear resizes use two taps with 11-bit weights, area resizes up
/// to four (or more) with 12-bit weights.
///
/// Built from the taps once per resize. In the AVX2 build the outputs go four to a 128-bit lane:
/// a block of four outputs whose taps lie within 16 bytes of the source row is one unaligned
/// load, a `pshufb` per pair of taps that widens the pair to 16 bits in the right lanes (the
/// shuffle masks are made here, per block), and a `pmaddwd` by the block's weights — no
/// pixel-by-pixel gather. The baseline build (SSE2 has no `pshufb`) gathers two-tap pairs as
/// 16-bit loads, and the scalar code computes the same integers for everything else.
///
/// A class (immutable): passed along per row (through `KernelDispatch.Taps`), it costs one
/// reference, where the struct it was retained and released its seven arrays on every call.
package final class HorizontalTaps: Sendable {
    /// Output pixels per row, source pixels per row, taps per output, bytes per pixel.
    package let count: Int, sourceWidth: Int, taps: Int, channels: Int
    /// Per output and tap: the source pixel (clamped into the row: a tap past its end reads the
    /// last pixel) and the weight, at `output · taps + tap`.
    let index: [Int32]
    let weights: [Int16]
    /// Outputs the shuffle path covers (a multiple of 16, from 0; always 0 in the baseline
    /// build); the rest go the other ways.
    package let shuffled: Int
    /// Per block of 4 outputs: the source pixel its 16-byte load starts at.
    let bases: [Int32]
    /// Per pair of blocks and pair of taps: 32 mask bytes (the two blocks' 16) and 16 weights.
    let masks: [UInt8]
    let blockWeights: [Int16]
    /// Bilinear's faster form (two taps whose weights sum to 2048, blocks of 8 outputs within
    /// 16 source bytes: scale factors up to about 2): the outputs it covers (a multiple of 16,
    /// from 0), each block's load start, and per pair of blocks 96 bytes — the mask that puts
    /// each output's (left, right) bytes side by side, and the right weight's two parts as
    /// signed byte pairs (−high, high) and (−low, low) — for the two 128-bit lanes.
    package let interpolated: Int
    /// One channel, two taps, each pair two neighbours: what the baseline's gather reads as a
    /// 16-bit load.
    let adjacentPairs: Bool
    let pairBases: [Int32]
    let pairTables: [UInt8]

    /// `first[i]`: output `i`'s first source pixel; `weights[i · taps + k]`: the weight of
    /// source pixel `first[i] + k`. `taps` even (pad with zero weights).
    package init(first: [Int32], weights: [Int16], taps: Int, sourceWidth: Int, channels: Int) {
        precondition(taps > 0 && taps % 2 == 0 && weights.count == first.count * taps && sourceWidth > 0)
        count = first.count
        self.sourceWidth = sourceWidth
        self.taps = taps
        self.channels = channels
        self.weights = weights
        var index = [Int32](repeating: 0, count: count * taps)
        for i in 0..<count {
            for k in 0..<taps { index[i * taps + k] = min(first[i] + Int32(k), Int32(sourceWidth - 1)) }
        }
        self.index = index
        adjacentPairs = channels == 1 && taps == 2 && (0..<count).allSatisfy { index[2 * $0 + 1] == index[2 * $0] + 1 }
        var blocks = 0
        var bases: [Int32] = []
        var masks: [UInt8] = []
        var blockWeights: [Int16] = []
        #if FRAMEKIT_AVX2
        // Blocks while they fit: every weighted tap within the 16 bytes loaded, which start at
        // the block's first tap or, near the row's end, 16 bytes before it.
        if channels == 1 && sourceWidth >= 16 {
            while (blocks + 1) * 4 <= count {
                let base = min(first[blocks * 4], Int32(sourceWidth - 16))
                let fits = (0..<4).allSatisfy { j in
                    (0..<taps).allSatisfy { k in
                        let o = (blocks * 4 + j) * taps + k
                        return weights[o] == 0 || (index[o] >= base && index[o] - base < 16)
                    }
                }
                guard fits else { break }
                bases.append(base)
                blocks += 1
            }
            blocks &= ~3 // whole pairs of 8-output steps (the 16-bit path packs two at a time)
            bases.removeLast(bases.count - blocks)
            let pairs = taps / 2
            masks = [UInt8](repeating: 0x80, count: blocks / 2 * pairs * 32)
            blockWeights = [Int16](repeating: 0, count: blocks / 2 * pairs * 16)
            for b in 0..<blocks {
                for p in 0..<pairs {
                    let at = ((b / 2) * pairs + p) * 16 + (b % 2) * 8 // in 16-bit units
                    for j in 0..<4 {
                        for t in 0..<2 {
                            let o = (b * 4 + j) * taps + 2 * p + t
                            let lane = at + 2 * j + t
                            guard weights[o] != 0 else { continue }
                            masks[2 * lane] = UInt8(index[o] - bases[b])
                            blockWeights[lane] = weights[o]
                        }
                    }
                }
            }
        }
        #endif
        var pairBlocks = 0
        var pairBases: [Int32] = []
        var pairTables: [UInt8] = []
        #if FRAMEKIT_AVX2
        // Weights summing to 2048, each within 0…2048 (the byte encoding of the right weight's
        // parts below holds only there; other pairs take the general path).
        let interpolating =
            channels == 1 && taps == 2 && sourceWidth >= 16
            && (0..<count).allSatisfy { (i: Int) -> Bool in
                let (left, right) = (Int32(weights[2 * i]), Int32(weights[2 * i + 1]))
                return left + right == 2048 && right >= 0 && right <= 2048
            }
        if interpolating {
            while (pairBlocks + 1) * 8 <= count {
                let base = min(first[pairBlocks * 8], Int32(sourceWidth - 16))
                let fits = (0..<16).allSatisfy { o in index[pairBlocks * 16 + o] >= base && index[pairBlocks * 16 + o] - base < 16 }
                guard fits else { break }
                pairBases.append(base)
                pairBlocks += 1
            }
            pairBlocks &= ~1
            pairBases.removeLast(pairBases.count - pairBlocks)
            pairTables = [UInt8](repeating: 0x80, count: pairBlocks / 2 * 96)
            for b in 0..<pairBlocks {
                let at = (b / 2) * 96 + (b % 2) * 16
                for j in 0..<8 {
                    let o = (b * 8 + j) * 2
                    var (left, w) = (index[o], Int(weights[o + 1]))
                    // All the weight on the right (the row's end, or a fraction rounded up): the
                    // right pixel twice, weight 0.
                    if w == 2048 { (left, w) = (index[o + 1], 0) }
                    pairTables[at + 2 * j] = UInt8(left - pairBases[b])
                    pairTables[at + 2 * j + 1] = UInt8(index[o + 1] - pairBases[b])
                    // w = 16·high + low: high ≤ 127 and low ≤ 15 fit signed bytes.
                    let (high, low) = (w >> 4, w & 15)
                    pairTables[at + 32 + 2 * j] = UInt8(bitPattern: Int8(-high))
                    pairTables[at + 32 + 2 * j + 1] = UInt8(high)
                    pairTables[at + 64 + 2 * j] = UInt8(bitPattern: Int8(-low))
                    pairTables[at + 64 + 2 * j + 1] = UInt8(low)
                }
            }
        }
        #endif
        interpolated = pairBlocks * 8
        self.pairBases = pairBases
        self.pairTables = pairTables
        shuffled = blocks * 4
        self.bases = bases
        self.masks = masks
        self.blockWeights = blockWeights
    }

    /// One source row → `count · channels` exact sums.
    package func sums(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int32>) {
        var x = 0
        #if FRAMEKIT_AVX2
        x = shuffledSums(row, shift: 0) { i, v, w in
            _mm256_storeu_si256(UnsafeMutableRawPointer(out + i).assumingMemoryBound(to: __m256i_u.self), v)
            _mm256_storeu_si256(UnsafeMutableRawPointer(out + i + 8).assumingMemoryBound(to: __m256i_u.self), w)
        }
        #endif
        scalar(row, from: x) { out[$0] = $1 }
    }

    /// One source row → `count · channels` sums `>> 4` as 16-bit values: 128 × the
    /// interpolated pixel for bilinear weights summing to 2048.
    package func sumsShifted(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int16>) {
        var x = 0
        #if FRAMEKIT_AVX2
        if interpolated > 0 {
            x = interpolatedPairs(row, into: out)
        } else {
            x = shuffledSums(row, shift: 4) { i, v, w in
                // 16 sums packed to 16-bit values.
                storePacked(_mm256_packs_epi32(v, w), at: out + i)
            }
        }
        #endif
        #if arch(x86_64)
        if adjacentPairs { x = gatheredPairs(row, from: x, into: out) }
        #endif
        scalar(row, from: x) { out[$0] = Int16(truncatingIfNeeded: $1 &>> 4) }
    }

    @inline(__always)
    func scalar(_ row: UnsafePointer<UInt8>, from start: Int, _ store: (Int, Int32) -> Void) {
        index.withUnsafeBufferPointer { index in
            weights.withUnsafeBufferPointer { weights in
                let c = channels
                for x in start..<count {
                    for ch in 0..<c {
                        var sum: Int32 = 0
                        for k in 0..<taps {
                            let o = x &* taps &+ k
                            sum &+= Int32(row[Int(index[o]) &* c &+ ch]) &* Int32(weights[o])
                        }
                        store(x &* c &+ ch, sum)
                    }
                }
            }
        }
    }
}

#if arch(x86_64)
extension HorizontalTaps {
    /// The baseline's two-tap path for one channel: eight (left, right) byte pairs gathered as
    /// 16-bit loads (two to a 32-bit register before they enter the vector: fewer shuffles),
    /// widened, multiplied by their weights and summed in pairs (`pmaddwd`), `>> 4`.
    func gatheredPairs(_ row: UnsafePointer<UInt8>, from start: Int, into out: UnsafeMutablePointer<Int16>) -> Int {
        var x = start
        index.withUnsafeBufferPointer { index in
            weights.withUnsafeBufferPointer { weights in
                let zero = _mm_setzero_si128()
                let w = UnsafeRawPointer(weights.baseAddress!)
                @inline(__always) func pair(_ i: Int) -> UInt32 {
                    UInt32(UnsafeRawPointer(row).loadUnaligned(fromByteOffset: Int(index[2 &* i]), as: UInt16.self))
                }
                @inline(__always) func pairs(_ i: Int) -> Int32 { Int32(bitPattern: pair(i) | pair(i &+ 1) &<< 16) }
                while x + 8 <= count {
                    let pairs = _mm_set_epi32(pairs(x &+ 6), pairs(x &+ 4), pairs(x &+ 2), pairs(x))
                    let lo = _mm_madd_epi16(
                        _mm_unpacklo_epi8(pairs, zero),
                        _mm_loadu_si128(w.advanced(by: 4 &* x).assumingMemoryBound(to: __m128i_u.self)))
                    let hi = _mm_madd_epi16(
                        _mm_unpackhi_epi8(pairs, zero),
                        _mm_loadu_si128(w.advanced(by: 4 &* x &+ 16).assumingMemoryBound(to: __m128i_u.self)))
                    _mm_storeu_si128(
                        UnsafeMutableRawPointer(out + x).assumingMemoryBound(to: __m128i_u.self),
                        _mm_packs_epi32(_mm_srai_epi32(lo, 4), _mm_srai_epi32(hi, 4)))
                    x += 8
                }
            }
        }
        return x
    }
}
#endif

#if FRAMEKIT_AVX2
extension HorizontalTaps {
    /// 16 outputs a step (four blocks, two to a 256-bit register, one per 128-bit lane), their
    /// sums `>> shift` handed to `store(first output, outputs 0…7, outputs 8…15)`; returns the
    /// outputs done.
    @inline(__always)
    func shuffledSums(_ row: UnsafePointer<UInt8>, shift: Int32, _ store: (Int, __m256i, __m256i) -> Void) -> Int {
        bases.withUnsafeBufferPointer { bases in
            masks.withUnsafeBufferPointer { masks in
                blockWeights.withUnsafeBufferPointer { weights in
                    let m = UnsafeRawPointer(masks.baseAddress!)
                    let w = UnsafeRawPointer(weights.baseAddress!)
                    @inline(__always) func run(pairs: Int) {
                        @inline(__always) func eight(_ step: Int) -> __m256i {
                            let source = _mm256_loadu2_m128i(
                                UnsafePointer<__m128i_u>(OpaquePointer(row + Int(bases[2 &* step &+ 1]))),
                                UnsafePointer<__m128i_u>(OpaquePointer(row + Int(bases[2 &* step]))))
                            var sum = _mm256_setzero_si256()
                            for p in 0..<pairs {
                                let at = (step &* pairs &+ p) &* 32
                                let mask = _mm256_loadu_si256(m.advanced(by: at).assumingMemoryBound(to: __m256i_u.self))
                                let weight = _mm256_loadu_si256(w.advanced(by: at).assumingMemoryBound(to: __m256i_u.self))
                                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_shuffle_epi8(source, mask), weight))
                            }
                            return shift == 0 ? sum : _mm256_srai_epi32(sum, shift)
                        }
                        var step = 0
                        while step &* 8 < shuffled {
                            store(step &* 8, eight(step), eight(step &+ 1))
                            step &+= 2
                        }
                    }
                    // The common tap counts with their loop unrolled.
                    switch taps {
                    case 2: run(pairs: 1)
                    case 4: run(pairs: 2)
                    default: run(pairs: taps / 2)
                    }
                }
            }
        }
        return shuffled
    }
}

extension HorizontalTaps {
    /// Bilinear with weights (2048 − w, w): (a·(2048 − w) + b·w) >> 4 is exactly
    /// 128·a + (b − a)·high + ((b − a)·low) >> 4 for w = 16·high + low, and with each output's
    /// (a, b) bytes side by side one `pmaddubsw` by (−high, high) gives (b − a)·high and one
    /// by (−low, low) gives (b − a)·low: eight outputs a 128-bit lane from one 16-byte load and
    /// one byte shuffle (the general path needs four shuffles, a pack and a permute per 16).
    @inline(__always)
    func interpolatedPairs(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int16>) -> Int {
        pairBases.withUnsafeBufferPointer { bases in
            pairTables.withUnsafeBufferPointer { tables in
                let t = UnsafeRawPointer(tables.baseAddress!)
                let lowBytes = _mm256_set1_epi16(0x00FF)
                var step = 0
                while step &* 16 < interpolated {
                    let source = _mm256_loadu2_m128i(
                        UnsafePointer<__m128i_u>(OpaquePointer(row + Int(bases[2 &* step &+ 1]))),
                        UnsafePointer<__m128i_u>(OpaquePointer(row + Int(bases[2 &* step]))))
                    let at = step &* 96
                    @inline(__always) func table(_ o: Int) -> __m256i {
                        _mm256_loadu_si256(t.advanced(by: at &+ o).assumingMemoryBound(to: __m256i_u.self))
                    }
                    let pairs = _mm256_shuffle_epi8(source, table(0)) // per 16-bit lane: a | b << 8
                    let high = _mm256_maddubs_epi16(pairs, table(32))
                    let low = _mm256_srai_epi16(_mm256_maddubs_epi16(pairs, table(64)), 4)
                    let a128 = _mm256_slli_epi16(_mm256_and_si256(pairs, lowBytes), 7)
                    _mm256_storeu_si256(
                        UnsafeMutableRawPointer(out + step &* 16).assumingMemoryBound(to: __m256i_u.self),
                        _mm256_add_epi16(_mm256_add_epi16(a128, high), low))
                    step &+= 1
                }
            }
        }
        return interpolated
    }
}
#endif
