import Foundation

/// Whether the tests that run in a cgroup of their own (``MemoryLimitGroup``, ``CPUQuotaGroup``)
/// must run: `FRAMEKIT_REQUIRE_CGROUPS=1`, which CI sets (its machines are root with a cgroup
/// file system, so one that cannot make a group has lost a check, and says so by failing).
/// Elsewhere they are skipped, with the reason, where this process may not make one.
public enum TestCgroups {
    public static var required: Bool { ProcessInfo.processInfo.environment["FRAMEKIT_REQUIRE_CGROUPS"] == "1" }
}
