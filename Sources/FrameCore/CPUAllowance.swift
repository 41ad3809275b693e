import CCPUFeatures
import Foundation

/// The CPUs this process may use, as a deployment gives them: its affinity mask (a Slurm task
/// pinned to its cores, `taskset`) and its CPU quota (a Kubernetes `limits: cpu`, a cgroup's
/// cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), not the machine's cores.
///
/// FrameKit sizes its thread pools from ``count``: a pool of two threads on one allowed CPU
/// makes each wait for the other to be scheduled.
///
/// ```swift
/// let cpus = CPUAllowance.current
/// print(cpus.count, cpus.limit) // 1 affinity, under `taskset -c 0`
/// ```
public struct CPUAllowance: Sendable, Equatable, CustomStringConvertible {
    /// What set ``count``.
    public enum Limit: String, Sendable {
        /// Every online CPU: no mask or quota below the machine's.
        case machine
        /// The affinity mask (`sched_getaffinity`).
        case affinity
        /// A cgroup v2 `cpu.max` quota, this process's cgroup or one above it.
        case cgroupV2 = "cgroup v2 cpu.max"
        /// A cgroup v1 CFS quota (`cpu.cfs_quota_us` over `cpu.cfs_period_us`).
        case cgroupV1 = "cgroup v1 cpu.cfs_quota_us"
    }

    /// Threads worth running at once: the fewer of the affinity mask's CPUs and the quota
    /// rounded down, at least 1.
    public var count: Int
    /// What set ``count``.
    public var limit: Limit
    /// CPUs in the affinity mask.
    public var affinityCPUs: Int
    /// The tightest quota over this process's cgroups, in CPUs (1.5: 150 ms each 100 ms), if any.
    public var quota: Double?

    /// The CPU time the process may use each second, in CPUs: the quota where it is below the
    /// affinity mask's CPUs, else those CPUs.
    public var cpus: Double { min(Double(affinityCPUs), quota ?? .infinity) }

    public var description: String {
        let q = quota.map { ", quota \(($0 * 100).rounded() / 100) CPUs" } ?? ""
        return "\(count) CPU\(count == 1 ? "" : "s") (\(limit.rawValue): \(affinityCPUs) in the affinity mask\(q))"
    }

    package init(affinityCPUs: Int, onlineCPUs: Int, quota: Double?, quotaLimit: Limit) {
        self.affinityCPUs = max(1, affinityCPUs)
        self.quota = quota
        let byQuota = quota.map { max(1, Int($0.rounded(.down))) }
        if let byQuota, byQuota < self.affinityCPUs {
            count = byQuota
            limit = quotaLimit
        } else {
            count = self.affinityCPUs
            limit = self.affinityCPUs < onlineCPUs ? .affinity : .machine
        }
    }

    /// The process's allowance, read once, when first asked (a quota or mask changed later is
    /// not seen: pools are sized once).
    public static var current: CPUAllowance { cached }
    private static let cached = read(root: URL(fileURLWithPath: "/"), affinityCPUs: affinityCount())

    /// CPUs in the calling thread's affinity mask (a process's threads inherit its mask), or the
    /// online CPUs where the mask cannot be read.
    package static func affinityCount() -> Int {
        let count = Int(ccpu_affinity_count())
        return count > 0 ? count : onlineCount()
    }

    private static func onlineCount() -> Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Reads the quota under `root` (`/`, or a test's copy of `proc/self/cgroup`,
    /// `proc/self/mountinfo` and the cgroup files they name).
    package static func read(root: URL, affinityCPUs: Int, onlineCPUs: Int = onlineCount()) -> CPUAllowance {
        func text(_ path: String) -> String? {
            try? String(contentsOf: root.appendingPathComponent(String(path.drop(while: { $0 == "/" }))), encoding: .utf8)
        }
        let memberships = text("/proc/self/cgroup").map(CgroupFiles.memberships) ?? []
        let mounts = text("/proc/self/mountinfo").map(CgroupFiles.mounts) ?? []
        var best: (quota: Double, limit: Limit)?
        for directory in CgroupFiles.cpuDirectories(memberships: memberships, mounts: mounts) {
            let quota: Double?
            switch directory.version {
            case 2: quota = text(directory.path + "/cpu.max").flatMap(CgroupFiles.quotaV2)
            default:
                quota = CgroupFiles.quotaV1(
                    quota: text(directory.path + "/cpu.cfs_quota_us"), period: text(directory.path + "/cpu.cfs_period_us"))
            }
            if let quota, quota < best?.quota ?? .infinity { best = (quota, directory.version == 2 ? .cgroupV2 : .cgroupV1) }
        }
        return CPUAllowance(affinityCPUs: affinityCPUs, onlineCPUs: onlineCPUs, quota: best?.quota, quotaLimit: best?.limit ?? .machine)
    }
}

/// The parsers behind ``CPUAllowance``: `/proc/self/cgroup`, `/proc/self/mountinfo` and the
/// quota files.
package enum CgroupFiles {
    /// A line of `/proc/self/cgroup`: `0::/path` (v2) or `4:cpu,cpuacct:/path` (v1).
    package struct Membership: Equatable {
        package var controllers: [String]
        package var path: String
        package var isV2: Bool { controllers.isEmpty }
    }

    /// A cgroup file system's mount: where it is, which of the hierarchy it shows (`root`), and
    /// for v1 its controllers.
    package struct Mount: Equatable {
        package var root: String
        package var point: String
        package var isV2: Bool
        package var controllers: [String]
    }

    package static func memberships(_ text: String) -> [Membership] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return nil }
            let controllers = fields[1].split(separator: ",").map(String.init).filter { !$0.hasPrefix("name=") }
            if fields[1].isEmpty && fields[0] != "0" { return nil }
            if !fields[1].isEmpty && controllers.isEmpty { return nil } // a named hierarchy (name=systemd)
            return Membership(controllers: controllers, path: String(fields[2]))
        }
    }

    /// `ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER-OPTIONS`, cgroup ones only.
    package static func mounts(_ text: String) -> [Mount] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map(String.init)
            guard let dash = fields.firstIndex(of: "-"), dash >= 5, fields.count >= dash + 3 else { return nil }
            let type = fields[dash + 1]
            guard type == "cgroup" || type == "cgroup2" else { return nil }
            let controllers = type == "cgroup" ? fields[dash + 3].split(separator: ",").map(String.init) : []
            return Mount(root: unescape(fields[3]), point: unescape(fields[4]), isV2: type == "cgroup2", controllers: controllers)
        }
    }

    /// The directories to read a CPU quota in, this process's cgroup first, then each above
    /// it up to the mount's top: a parent's quota bounds its children.
    package static func cpuDirectories(memberships: [Membership], mounts: [Mount]) -> [(version: Int, path: String)] {
        var directories: [(Int, String)] = []
        for membership in memberships {
            let mount: Mount?
            if membership.isV2 {
                mount = mounts.first(where: \.isV2)
            } else if membership.controllers.contains("cpu") {
                mount = mounts.first { !$0.isV2 && $0.controllers.contains("cpu") }
            } else {
                continue
            }
            guard let mount else { continue }
            // The path as the mount shows it: below the mount's root (a container's cgroup
            // namespace mounts its own cgroup as the top); a path outside it is the top itself.
            var relative = membership.path
            if mount.root != "/" {
                relative = relative.hasPrefix(mount.root) ? String(relative.dropFirst(mount.root.count)) : "/"
            }
            var parts = relative.split(separator: "/").map(String.init)
            while true {
                let path = ([mount.point.hasSuffix("/") ? String(mount.point.dropLast()) : mount.point] + parts).joined(separator: "/")
                directories.append((membership.isV2 ? 2 : 1, path))
                if parts.isEmpty { break }
                parts.removeLast()
            }
        }
        return directories
    }

    /// `cpu.max`: `max 100000` (none) or `150000 100000` (1.5 CPUs).
    package static func quotaV2(_ text: String) -> Double? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 1, let quota = Double(fields[0]), quota > 0 else { return nil }
        let period = fields.count >= 2 ? Double(fields[1]) ?? 100_000 : 100_000
        return period > 0 ? quota / period : nil
    }

    /// `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`.
    package static func quotaV1(quota: String?, period: String?) -> Double? {
        guard let q = quota.flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), q > 0,
            let p = period.flatMap({ Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), p > 0
        else { return nil }
        return q / p
    }

    /// mountinfo writes a space, tab, newline and backslash in a path as octal escapes (`\040`).
    private static func unescape(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "\\"), utf8.count >= 3,
                let value = UInt8(String(decoding: utf8.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
