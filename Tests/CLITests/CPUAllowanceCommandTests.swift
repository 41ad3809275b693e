import Foundation
import FrameTestSupport
import Testing

/// `framekit detect` sizes its threads from the CPUs it is given, and says so in its summary:
/// pinned to one CPU as a Slurm task is (taskset), or under a CPU quota as a Kubernetes pod is
/// (a cgroup of its own, made here where this process may).
@Suite("framekit detect on the CPUs it is given")
struct CPUAllowanceCommandTests {
    static func summary(_ run: BinaryRun) throws -> [String: Any] {
        try #require(try run.summary(), "\(run.stderr)")
    }

    static let framekit = BinaryRunner.productsFolder.appendingPathComponent("framekit").path
    static let arguments = ["detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "3"]

    @Test(
        "pinned to one CPU: one inference thread, the summary naming the affinity mask",
        .enabled(if: ProcessInfo.processInfo.activeProcessorCount > 1 && FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset")))
    func pinned() throws {
        let run = try BinaryRunner.runTool("/usr/bin/taskset", ["-c", "0", Self.framekit] + Self.arguments)
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try Self.summary(run)
        let cpus = try #require(summary["cpus"] as? [String: Any])
        #expect(cpus["count"] as? Int == 1 && cpus["from"] as? String == "affinity" && cpus["affinity"] as? Int == 1, "\(cpus)")
        #expect(summary["inference_threads"] as? Int == 1)
    }

    @Test(
        "a CPU quota of one CPU (a cgroup of its own, v2 or v1): one inference thread, the summary naming the quota",
        .enabled(if: CPUQuotaGroup.canRun, Comment(rawValue: CPUQuotaGroup.whyNot)))
    func quota() throws {
        let quota = try CPUQuotaGroup(cpus: 1)
        defer { quota.remove() }
        let run = try BinaryRunner.runTool(
            "/bin/sh", Array(quota.wrapping([Self.framekit] + Self.arguments).dropFirst()))
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try Self.summary(run)
        let cpus = try #require(summary["cpus"] as? [String: Any])
        #expect(
            cpus["count"] as? Int == 1 && (cpus["from"] as? String ?? "").hasPrefix("cgroup") && cpus["quota"] as? Double == 1, "\(cpus)")
        #expect(summary["inference_threads"] as? Int == 1)
    }
}
