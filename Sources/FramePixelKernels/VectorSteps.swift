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
