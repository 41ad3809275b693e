import Foundation

/// A cgroup of a test's own with a memory limit (what a Kubernetes `limits: memory` is): a
/// process in it that goes past the limit is killed by the kernel's OOM killer (SIGKILL, exit
/// 137 through a shell). Removed by ``remove()``. Needs root and a writable cgroup file system
/// with the memory controller: v2, or v1's memory hierarchy (swap counted too where v1 can).
public struct MemoryLimitGroup: Sendable {
    /// The folder to make cgroups in and whether it is v2, if this process may.
    public static var writable: (parent: String, v2: Bool)? {
        let v2 = "/sys/fs/cgroup"
        if let controllers = try? String(contentsOfFile: v2 + "/cgroup.controllers", encoding: .utf8),
            controllers.split(whereSeparator: \.isWhitespace).contains("memory"), access(v2 + "/cgroup.subtree_control", W_OK) == 0
        {
            return (v2, true)
        }
        let v1 = "/sys/fs/cgroup/memory"
        if access(v1 + "/memory.limit_in_bytes", F_OK) == 0, access(v1, W_OK) == 0 { return (v1, false) }
        return nil
    }

    /// Whether a test in such a group runs: where this process may make one, and always where
    /// ``TestCgroups/required`` (then a machine that cannot is a failure, not a skip).
    public static var canRun: Bool { writable != nil || TestCgroups.required }
    public static let whyNot =
        "no cgroup with the memory controller that this process may write (root and cgroup v2, or v1's memory hierarchy); FRAMEKIT_REQUIRE_CGROUPS=1 makes this a failure"

    public let folder: String
    /// Write a process's pid here to move it into the group.
    public var procs: String { folder + "/cgroup.procs" }

    public init(bytes: Int) throws {
        guard let (parent, v2) = Self.writable else { throw CocoaError(.fileWriteNoPermission) }
        folder = parent + "/framekit-test-memory-\(getpid())-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        do {
            // A limit that could not be set throws (and the group goes): a test must not run
            // "in a limit" that is not there.
            if v2 {
                try? "+memory".write(toFile: parent + "/cgroup.subtree_control", atomically: false, encoding: .utf8)
                try "\(bytes)".write(toFile: folder + "/memory.max", atomically: false, encoding: .utf8)
                try? "0".write(toFile: folder + "/memory.swap.max", atomically: false, encoding: .utf8)
            } else {
                try "\(bytes)".write(toFile: folder + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
                try? "\(bytes)".write(toFile: folder + "/memory.memsw.limit_in_bytes", atomically: false, encoding: .utf8)
            }
        } catch {
            rmdir(folder)
            throw error
        }
    }

    /// Times the kernel's OOM killer acted in the group (v2 `memory.events` oom_kill, v1
    /// `memory.oom_control` oom_kill), or nil where the kernel does not say.
    public var oomKills: Int? {
        for (file, key) in [("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")] {
            guard let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == key { return Int(parts[1]) }
            }
        }
        return nil
    }

    /// `command` run inside the group (``cgroupWrapping(_:procs:)``).
    public func wrapping(_ command: [String]) -> [String] { cgroupWrapping(command, procs: procs) }

    public func remove() { rmdir(folder) }
}
