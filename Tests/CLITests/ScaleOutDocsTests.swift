import Foundation
import FrameTestSupport
import Testing

/// docs/scale-out.md's manifests and scripts are what users paste: each must at least parse.
@Suite("docs/scale-out.md: the manifests and scripts parse")
struct ScaleOutDocsTests {
    /// The fenced blocks of `language` in docs/scale-out.md.
    func blocks(_ language: String) throws -> [String] { try Fixtures.fencedBlocks(language, in: "docs/scale-out.md") }

    @Test("every YAML block is a Kubernetes object (apiVersion, kind, metadata.name, spec) by PyYAML")
    func yaml() throws {
        let manifests = try blocks("yaml")
        #expect(manifests.count >= 2)
        for manifest in manifests {
            let check = """
                import sys, yaml
                doc = yaml.safe_load(sys.stdin.read())
                assert isinstance(doc, dict), "not a mapping"
                for key in ("apiVersion", "kind", "spec"): assert key in doc, "no " + key
                assert doc["metadata"]["name"], "no metadata.name"
                spec = doc["spec"]["template"]["spec"] if doc["kind"] == "DaemonSet" else doc["spec"]["template"]["spec"]
                assert spec["containers"][0]["args"][0] == "detect", "the container does not run framekit detect"
                print(doc["kind"])
                """
            let file = Fixtures.temporaryFolder("docs").appendingPathComponent("m.yaml")
            try manifest.write(to: file, atomically: true, encoding: .utf8)
            let run = try BinaryRunner.runTool("/bin/sh", ["-c", "/usr/bin/python3 -c '\(check)' < '\(file.path)'"])
            #expect(run.status == 0, "\(run.stderr)\n\(manifest.prefix(200))")
        }
    }

    @Test("every shell block passes bash -n, and each framekit command in them parses (usage errors would exit 64)")
    func shell() throws {
        let scripts = try blocks("sh") + blocks("bash")
        #expect(scripts.count >= 2)
        for script in scripts {
            let file = Fixtures.temporaryFolder("docs").appendingPathComponent("s.sh")
            try script.write(to: file, atomically: true, encoding: .utf8)
            let run = try BinaryRunner.runTool("/bin/bash", ["-n", file.path])
            #expect(run.status == 0, "\(run.stderr)\n\(script.prefix(200))")
        }
        // The options the docs use exist: `--help` of each command lists them.
        let detect = try BinaryRunner.run("framekit", ["detect", "--help"]).stdout
        for option in ["--inputs", "--output-dir", "--shard", "--shard-count", "--metrics", "--detector", "--device", "--preset"] {
            #expect(detect.contains(option), "detect --help lacks \(option)")
        }
        let merge = try BinaryRunner.run("framekit", ["merge", "--help"]).stdout
        #expect(merge.contains("--output") && merge.contains("--report"))
    }
}
