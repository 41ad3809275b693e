import Foundation

/// A cgroup of a test's or the benchmark's own with a CPU quota (what a Kubernetes `limits: cpu`
/// is), removed by ``remove()``. Needs root and a writable cgroup file system with the cpu
/// controller: v2, or v1's cpu hierarchy.
public struct CPUQuotaGroup: Sendable {
    /// The folder to make cgroups in and whether it is v2, if this process may.
    public static var writable: (parent: String, v2: Bool)? {
        let v2 = "/sys/fs/cgroup"
        if let controllers = try? String(contentsOfFile: v2 + "/cgroup.controllers", encoding: .utf8),
            controllers.split(whereSeparator: \.isWhitespace).contains("cpu"), access(v2 + "/cgroup.subtree_control", W_OK) == 0
        {
            return (v2, true)
        }
        for v1 in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"] where access(v1 + "/cpu.cfs_quota_us", F_OK) == 0 {
            if access(v1, W_OK) == 0 { return (v1, false) }
        }
        return nil
    }

    /// Whether a test in such a group runs: where this process may make one, and always where
    /// ``TestCgroups/required`` (then a machine that cannot is a failure, not a skip).
    public static var canRun: Bool { writable != nil || TestCgroups.required }
    public static let whyNot =
        "no cgroup with the cpu controller that this process may write (root and cgroup v2, or v1's cpu hierarchy); FRAMEKIT_REQUIRE_CGROUPS=1 makes this a failure"

    public let folder: String
    /// Write a process's pid here to move it into the group.
    public var procs: String { folder + "/cgroup.procs" }

    public init(cpus: Double) throws {
        guard let (parent, v2) = Self.writable else { throw CocoaError(.fileWriteNoPermission) }
        folder = parent + "/framekit-test-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let quota = String(Int(cpus * 100_000))
        if v2 {
            try? "+cpu".write(toFile: parent + "/cgroup.subtree_control", atomically: false, encoding: .utf8)
            try "\(quota) 100000".write(toFile: folder + "/cpu.max", atomically: false, encoding: .utf8)
        } else {
            try "100000".write(toFile: folder + "/cpu.cfs_period_us", atomically: false, encoding: .utf8)
            try quota.write(toFile: folder + "/cpu.cfs_quota_us", atomically: false, encoding: .utf8)
        }
    }

    public func remove() { rmdir(folder) }
}

extension CPUQuotaGroup {
    /// `command` run inside the group (``cgroupWrapping(_:procs:)``).
    public func wrapping(_ command: [String]) -> [String] { cgroupWrapping(command, procs: procs) }
}

/// `command` run inside the cgroup whose `cgroup.procs` is `procs`: through `/bin/sh`, which
/// moves itself in and then becomes the command (same process, so its CPU time and memory are
/// the command's).
public func cgroupWrapping(_ command: [String], procs: String) -> [String] {
    ["/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", procs] + command
}
