import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// CPUAllowance: the CPUs a process may use, from its affinity mask and its cgroup's quota,
/// read from a copy of the files the kernel shows (`proc/self/cgroup`, `proc/self/mountinfo`,
/// the quota files), as Kubernetes, Docker, Slurm and systemd lay them out.
@Suite("The CPUs this process may use")
struct CPUAllowanceTests {
    /// A folder standing for `/`: each path's text.
    static func root(_ files: [String: String]) throws -> URL {
        let root = Fixtures.temporaryFolder().appendingPathComponent("cpus-\(UUID().uuidString)")
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        return root
    }

    static let v2Mount = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
    static let v1Mounts = """
        25 23 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
        31 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,cpu,cpuacct
        32 25 0:28 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,cpuset
        33 25 0:29 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,xattr,name=systemd

        """

    @Test("cgroup v2: a pod's cpu.max of 1.5 CPUs gives one thread on an 8-CPU mask; 'max' gives the mask")
    func cgroupV2() throws {
        let pod = "/kubepods.slice/kubepods-burstable.slice/pod1.slice/cri-containerd-ab.scope"
        let limited = try Self.root([
            "proc/self/cgroup": "0::\(pod)\n", "proc/self/mountinfo": Self.v2Mount,
            "sys/fs/cgroup\(pod)/cpu.max": "150000 100000\n", "sys/fs/cgroup/kubepods.slice/cpu.max": "max 100000\n"
        ])
        let cpus = CPUAllowance.read(root: limited, affinityCPUs: 8, onlineCPUs: 8)
        #expect(cpus.count == 1 && cpus.limit == .cgroupV2 && cpus.quota == 1.5 && cpus.cpus == 1.5, "\(cpus)")

        let unlimited = try Self.root([
            "proc/self/cgroup": "0::/user.slice/session-1.scope\n", "proc/self/mountinfo": Self.v2Mount,
            "sys/fs/cgroup/user.slice/session-1.scope/cpu.max": "max 100000\n"
        ])
        let machine = CPUAllowance.read(root: unlimited, affinityCPUs: 8, onlineCPUs: 8)
        #expect(machine.count == 8 && machine.limit == .machine && machine.quota == nil, "\(machine)")
    }

    @Test("a parent cgroup's quota bounds its children: the tightest over the path counts")
    func parentQuota() throws {
        let root = try Self.root([
            "proc/self/cgroup": "0::/batch/job7/step0\n", "proc/self/mountinfo": Self.v2Mount,
            "sys/fs/cgroup/batch/job7/step0/cpu.max": "max 100000\n", "sys/fs/cgroup/batch/job7/cpu.max": "200000 100000\n",
            "sys/fs/cgroup/batch/cpu.max": "400000 100000\n"
        ])
        let cpus = CPUAllowance.read(root: root, affinityCPUs: 16, onlineCPUs: 16)
        #expect(cpus.count == 2 && cpus.quota == 2, "\(cpus)")
    }

    @Test("cgroup v1: cpu.cfs_quota_us over cpu.cfs_period_us in the cpu,cpuacct hierarchy; -1 is no quota")
    func cgroupV1() throws {
        let docker = "/docker/5f1c"
        let root = try Self.root([
            "proc/self/cgroup": "12:cpuset:\(docker)\n4:cpu,cpuacct:\(docker)\n1:name=systemd:\(docker)\n0::/\n",
            "proc/self/mountinfo": Self.v1Mounts,
            "sys/fs/cgroup/cpu,cpuacct\(docker)/cpu.cfs_quota_us": "50000\n",
            "sys/fs/cgroup/cpu,cpuacct\(docker)/cpu.cfs_period_us": "100000\n",
            "sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_quota_us": "-1\n", "sys/fs/cgroup/cpu,cpuacct/docker/cpu.cfs_period_us": "100000\n"
        ])
        let cpus = CPUAllowance.read(root: root, affinityCPUs: 2, onlineCPUs: 2)
        // Half a CPU: one thread (rounded down, at least one), half a CPU of time.
        #expect(cpus.count == 1 && cpus.limit == .cgroupV1 && cpus.cpus == 0.5, "\(cpus)")
    }

    @Test("a container's cgroup namespace: the mount's root is the process's own cgroup, read at the mount's top")
    func namespacedMount() throws {
        let root = try Self.root([
            "proc/self/cgroup": "0::/\n",
            "proc/self/mountinfo": "40 35 0:30 /kubepods/pod9/c1 /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
            "sys/fs/cgroup/cpu.max": "100000 100000\n"
        ])
        #expect(CPUAllowance.read(root: root, affinityCPUs: 4, onlineCPUs: 4).count == 1)
        // The membership seen from outside the namespace, with the mount's root as its prefix.
        let outside = try Self.root([
            "proc/self/cgroup": "0::/kubepods/pod9/c1\n",
            "proc/self/mountinfo": "40 35 0:30 /kubepods/pod9/c1 /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n",
            "sys/fs/cgroup/cpu.max": "300000 100000\n"
        ])
        #expect(CPUAllowance.read(root: outside, affinityCPUs: 4, onlineCPUs: 4).count == 3)
    }

    @Test("the affinity mask: fewer CPUs than the machine's is 'affinity'; below the quota, the mask counts")
    func affinity() throws {
        let root = try Self.root([
            "proc/self/cgroup": "0::/slurm/uid_0/job_3\n", "proc/self/mountinfo": Self.v2Mount,
            "sys/fs/cgroup/slurm/uid_0/job_3/cpu.max": "400000 100000\n"
        ])
        let pinned = CPUAllowance.read(root: root, affinityCPUs: 2, onlineCPUs: 32)
        #expect(pinned.count == 2 && pinned.limit == .affinity && pinned.cpus == 2, "\(pinned)")
    }

    @Test("missing, empty or garbled files leave the mask's count: never a crash, never zero")
    func garbled() throws {
        for files in [
            [:], ["proc/self/cgroup": "", "proc/self/mountinfo": ""],
            ["proc/self/cgroup": "garbage\n::\n0::\n", "proc/self/mountinfo": "1 2 3\n - cgroup2\n"],
            ["proc/self/cgroup": "0::/a\n", "proc/self/mountinfo": Self.v2Mount, "sys/fs/cgroup/a/cpu.max": "0 100000\n"],
            ["proc/self/cgroup": "0::/a\n", "proc/self/mountinfo": Self.v2Mount, "sys/fs/cgroup/a/cpu.max": "100000 0\n"],
            ["proc/self/cgroup": "0::/a\n", "proc/self/mountinfo": Self.v2Mount, "sys/fs/cgroup/a/cpu.max": "lots\n"]
        ] {
            let cpus = CPUAllowance.read(root: try Self.root(files), affinityCPUs: 3, onlineCPUs: 4)
            #expect(cpus.count == 3 && cpus.quota == nil, "\(files): \(cpus)")
        }
        // A quota of a tiny fraction of a CPU still runs one thread.
        let tiny = try Self.root([
            "proc/self/cgroup": "0::/a\n", "proc/self/mountinfo": Self.v2Mount, "sys/fs/cgroup/a/cpu.max": "1000 100000\n"
        ])
        #expect(CPUAllowance.read(root: tiny, affinityCPUs: 4, onlineCPUs: 4).count == 1)
    }

    @Test("mountinfo's octal escapes in a mount point are read as the characters they stand for")
    func escapedMountPoint() {
        let mounts = CgroupFiles.mounts("40 35 0:30 / /srv/my\\040cgroups rw - cgroup2 cgroup2 rw\n")
        #expect(mounts.count == 1 && mounts.first?.point == "/srv/my cgroups" && mounts.first?.isV2 == true, "\(mounts)")
    }

    @Test("this process: the mask the kernel gives, and the quota this machine sets, if any")
    func thisProcess() {
        let cpus = CPUAllowance.current
        #expect(cpus.count >= 1 && cpus.count <= cpus.affinityCPUs && cpus.affinityCPUs == CPUAllowance.affinityCount())
    }
}
