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
