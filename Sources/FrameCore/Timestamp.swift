import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point on the monotonic clock (`CLOCK_MONOTONIC`, the clock V4L2 stamps buffers with),
/// in nanoseconds.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var nanoseconds: UInt64

    @inlinable public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// Saturates: a negative or NaN time is 0, one past 584 years the clock's end.
    public init(seconds: Double) { self.nanoseconds = UInt64(saturating: seconds * 1e9) }

    /// Now, on the monotonic clock.
    @inlinable public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Timestamp(nanoseconds: UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec))
    }

    public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Seconds from `earlier` to `self` (negative if `earlier` is later).
    @inlinable public func seconds(since earlier: Timestamp) -> Double {
        nanoseconds >= earlier.nanoseconds
            ? Double(nanoseconds - earlier.nanoseconds) / 1e9
            : -Double(earlier.nanoseconds - nanoseconds) / 1e9
    }

    /// The wall-clock time this instant was, in milliseconds since 1970: the instant plus the
    /// wall clock's lead over the monotonic clock (which has no epoch of its own).
    public var wallClockMilliseconds: Int64 {
        Int64((Double(nanoseconds) / 1e6 + Self.heldWallClockLead()).rounded())
    }

    /// The wall clock's lead over the monotonic clock, in milliseconds, held while sure
    /// estimates stay within half a millisecond of it. Each estimate is off by up to a few
    /// hundredths of a millisecond, and an instant near a half millisecond then rounded one way
    /// in one conversion and the other in the next: the preview's two conversions of a frame's
    /// capture instant (its stamp, its faces' time) disagreed for one frame in ~230 in the
    /// browser test. A clock set, or slewed by NTP (at most 0.5 ms a second), moves it.
    static func heldWallClockLead() -> Double {
        let (fresh, spread) = wallClockLead()
        let held = Double(bitPattern: heldLead.load(ordering: .relaxed))
        // An unsure estimate (its reads of the wall clock far apart: a preempted thread) never
        // replaces a held lead.
        if !held.isNaN && (abs(fresh - held) < 0.5 || spread > 0.1) { return held }
        heldLead.store(fresh.bitPattern, ordering: .relaxed)
        return fresh
    }

    private static let heldLead = Atomic<UInt64>(Double.nan.bitPattern)

    /// How far the wall clock is ahead of the monotonic one now, in milliseconds, and how sure
    /// that is: the monotonic clock read between two reads of the wall clock, taken where those
    /// two were closest (`spread` apart). A thread preempted between its reads of the two clocks
    /// (a busy machine) was off by the preemption, milliseconds.
    static func wallClockLead() -> (lead: Double, spread: Double) {
        func milliseconds(_ clock: clockid_t) -> Double {
            var ts = timespec()
            clock_gettime(clock, &ts)
            return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
        }
        var best = (lead: 0.0, spread: Double.infinity)
        for _ in 0..<8 {
            let before = milliseconds(CLOCK_REALTIME)
            let monotonic = milliseconds(CLOCK_MONOTONIC)
            let after = milliseconds(CLOCK_REALTIME)
            if after - before < best.spread { best = ((before + after) / 2 - monotonic, after - before) }
            if best.spread < 0.05 { break }
        }
        return best
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Saturates at the clock's start and end (a timestamp jump in a file can ask for either).
    public func adding(seconds: Double) -> Timestamp {
        Timestamp(nanoseconds: UInt64(saturating: Double(nanoseconds) + seconds * 1e9))
    }

    public var description: String { "\(seconds)s" }

    /// Sleeps the calling thread until `deadline` (returns at once if it has passed).
    public static func sleep(until deadline: Timestamp) {
        let now = Timestamp.now()
        guard deadline > now else { return }
        let delta = deadline.nanoseconds - now.nanoseconds
        var request = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}

extension Duration {
    /// The duration in seconds, as a Double (pass latencies, budgets, timeouts).
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
