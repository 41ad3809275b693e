/// Arithmetic on values that come from outside (timestamps and sizes read from files and
/// streams, figures read back from stats files, counters that run for weeks): it saturates
/// instead of trapping, so hostile or absurd input can give absurd figures but never stop the
/// process.
extension FixedWidthInteger {
    /// `value` rounded towards zero, saturating: NaN is 0, values past the type's range are its
    /// bounds.
    @inlinable
    package init(saturating value: Double) {
        if !(value == value) {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to a power of two the type cannot hold: compare, don't convert.
            self = Self.max
        } else {
            self = Self(value)
        }
    }

    /// `self + other`, or the type's bound it would pass.
    @inlinable
    package func saturatingAdd(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? Self.max : Self.min
    }
}
