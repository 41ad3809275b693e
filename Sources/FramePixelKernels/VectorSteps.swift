#if arch(x86_64)
import _Builtin_intrinsics.intel
#endif

/// Calls `body(x)` for x = start, start + step, … while a whole step fits before `end`, four
/// calls a loop turn first (the loop's own bookkeeping costs as much as one vector's work);
/// returns where it stopped, for the caller's narrower or scalar tail.
@inline(__always)
func vectorSteps(from start: Int, to end: Int, by step: Int, _ body: (Int) -> Void) -> Int {
    var x = start
    while x &+ 4 &* step <= end {
        body(x)
        body(x &+ step)
        body(x &+ 2 &* step)
        body(x &+ 3 &* step)
        x &+= 4 &* step
    }
    while x &+ step <= end {
        body(x)
        x &+= step
    }
    return x
}

/// Calls `body(x)` for x = 0, step, 2·step, … while `x + reach <= count` (a step writes outputs
/// x ..< x + step and reads up to x + reach, `reach >= step`), then once more at
/// `count − reach`, overlapping the step before it, so that only `reach − step` outputs are
/// left to the caller's narrower or scalar code instead of up to `reach` — a third of a 320-pixel
/// row's time went to a 32-pixel scalar tail. Outputs computed twice get the same values (each
/// is a function of the source alone; source and destination never overlap). Returns the outputs
/// covered from 0.
@inline(__always)
func overlappedSteps(count: Int, step: Int, reach: Int, _ body: (Int) -> Void) -> Int {
    guard count >= reach else { return 0 }
    var x = 0
    while x &+ reach <= count {
        body(x)
        x &+= step
    }
    let last = count &- reach
    if last &+ step > x { body(last) }
    return last &+ step
}

#if FRAMEKIT_AVX2
/// Stores the 32 bytes a 256-bit pack of `a` and `b` (`packus`/`packs`, 16 → 8 or 32 → 16 bits)
/// made, in order: packing works within 128-bit lanes, so its 64-bit pieces come as a0 b0 a1 b1.
@inline(__always)
func storePacked(_ packed: __m256i, at out: UnsafeMutableRawPointer) {
    _mm256_storeu_si256(
        out.assumingMemoryBound(to: __m256i_u.self), _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)))
}
#endif
