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

    /// The wall-clock time this instant was, in milliseconds since 1970: now's wall clock less
    /// the instant's age (the monotonic clock has no epoch of its own).
    public var wallClockMilliseconds: Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let nowMilliseconds = Double(wall.tv_sec) * 1000 + Double(wall.tv_nsec) / 1e6
        return Int64((nowMilliseconds - Timestamp.now().seconds(since: self) * 1000).rounded())
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
