/// A latency histogram with fixed memory and an O(1) record: log-linear buckets (64 per
/// power of two) over 1 µs … 9.5 hours, so any percentile is within 1.6% of the exact
/// value; the maximum is exact.
public struct LatencyHistogram: Sendable, Equatable, Codable {
    @usableFromInline static let subBucketBits = 6
    @usableFromInline static let subBuckets = 1 << subBucketBits
    @usableFromInline static let powers = 30
    var counts: [UInt32]
    public private(set) var count: Int = 0
    public private(set) var maxMicroseconds: UInt64 = 0
    public private(set) var minMicroseconds: UInt64 = .max
    public private(set) var sumMicroseconds: UInt64 = 0

    public init() { counts = [UInt32](repeating: 0, count: Self.subBuckets * (Self.powers + 1)) }

    /// Records one latency in seconds (negative or NaN count as 0; beyond the range, the top).
    public mutating func record(seconds: Double) {
        let micro = seconds * 1_000_000
        record(microseconds: !(micro > 0) ? 0 : micro >= 1.8e19 ? .max : UInt64(micro))
    }

    public mutating func record(microseconds raw: UInt64) {
        let value = min(raw, (UInt64(1) << UInt64(Self.powers + Self.subBucketBits - 1)) - 1)
        let bucket = Self.index(of: value)
        counts[bucket] = counts[bucket].saturatingAdd(1)
        count &+= 1
        maxMicroseconds = max(maxMicroseconds, raw)
        minMicroseconds = min(minMicroseconds, raw)
        sumMicroseconds &+= raw
    }

    /// Bucket of `value`: values below 64 map one to one; above, the top 6 significant bits.
    @inlinable
    static func index(of value: UInt64) -> Int {
        if value < UInt64(subBuckets) { return Int(value) }
        let magnitude = 63 - value.leadingZeroBitCount - (subBucketBits - 1) // >= 1
        let sub = Int(value >> UInt64(magnitude)) - subBuckets / 2 // 0 ..< 32, top bit dropped
        return subBuckets + (magnitude - 1) * (subBuckets / 2) + sub
    }

    /// The smallest value of bucket `index`, and its width.
    static func range(of index: Int) -> (low: UInt64, width: UInt64) {
        if index < subBuckets { return (UInt64(index), 1) }
        let rest = index - subBuckets
        let magnitude = rest / (subBuckets / 2) + 1
        let sub = rest % (subBuckets / 2) + subBuckets / 2
        return (UInt64(sub) << UInt64(magnitude), UInt64(1) << UInt64(magnitude))
    }

    /// The value at percentile `p` (0…100) in microseconds: the middle of the bucket holding
    /// the rank-⌈p·n⌉ sample, never above the true maximum. 0 when empty.
    public func percentileMicroseconds(_ p: Double) -> Double {
        precondition((0...100).contains(p), "percentile must be in 0…100")
        guard count > 0 else { return 0 }
        // Ranked among the buckets' own samples: a bucket saturates at 2^32 - 1 (merged files of
        // huge counts), and `count` then says more than the buckets hold.
        let total = counts.reduce(0) { $0 + Int($1) }
        let rank = max(1, Int(saturating: (p / 100 * Double(total)).rounded(.up)))
        var seen = 0
        for (index, c) in counts.enumerated() where c > 0 {
            seen += Int(c)
            if seen >= rank {
                let (low, width) = Self.range(of: index)
                let mid = Double(low) + Double(width - 1) / 2
                return min(mid, Double(maxMicroseconds))
            }
        }
        return Double(maxMicroseconds)
    }

    /// Percentile `p` in milliseconds.
    public func percentileMilliseconds(_ p: Double) -> Double { percentileMicroseconds(p) / 1000 }

    public var meanMilliseconds: Double { count == 0 ? 0 : Double(sumMicroseconds) / Double(count) / 1000 }
    public var maxMilliseconds: Double { Double(maxMicroseconds) / 1000 }

    /// Samples at most `bound` microseconds, counting whole buckets (within a bucket's width, 1.6%):
    /// a Prometheus histogram's cumulative `le` count.
    package func count(atMostMicroseconds bound: UInt64) -> Int {
        var total = 0
        for (index, c) in counts.enumerated() where c > 0 {
            let (low, width) = Self.range(of: index)
            if low + width - 1 <= bound { total += Int(c) }
        }
        return total
    }

    /// Adds `count` samples of `microseconds` (a bucket read back from a stats file: its lower
    /// bound lands in the same bucket). The sum grows by as much; the maximum by the value.
    package mutating func add(microseconds value: UInt64, count n: Int) {
        guard n > 0 else { return }
        let clamped = min(value, (UInt64(1) << UInt64(Self.powers + Self.subBucketBits - 1)) - 1)
        let bucket = Self.index(of: clamped)
        counts[bucket] = counts[bucket].saturatingAdd(UInt32(clamping: n))
        count = count.saturatingAdd(n)
        maxMicroseconds = max(maxMicroseconds, value)
        minMicroseconds = min(minMicroseconds, value)
        sumMicroseconds &+= value &* UInt64(n)
    }

    /// Raises the exact maximum (a stats file's `max`, which its buckets only bound).
    package mutating func raiseMaximum(toMicroseconds value: UInt64) { maxMicroseconds = max(maxMicroseconds, value) }

    /// Adds another histogram's samples.
    public mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices { counts[i] = counts[i].saturatingAdd(other.counts[i]) }
        count = count.saturatingAdd(other.count)
        maxMicroseconds = max(maxMicroseconds, other.maxMicroseconds)
        minMicroseconds = min(minMicroseconds, other.minMicroseconds)
        sumMicroseconds &+= other.sumMicroseconds
    }

    /// Non-empty buckets as (lower bound µs, upper bound µs, count), for plots.
    public var buckets: [(lowMicroseconds: UInt64, highMicroseconds: UInt64, count: Int)] {
        counts.enumerated().compactMap { index, c in
            guard c > 0 else { return nil }
            let (low, width) = Self.range(of: index)
            return (low, low + width, Int(c))
        }
    }
}
