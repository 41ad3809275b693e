import Foundation
import FrameTestSupport
import Testing

@testable import FrameKitCommands

/// docs/ci.md's jobs are what users paste into their CI: each YAML block parses as a job, and
/// every `framekit bench` command in the doc parses with bench's own options.
@Suite("docs/ci.md: the CI jobs parse, and their framekit bench commands are valid")
struct CIDocsTests {
    @Test("each YAML block is a GitHub Actions or GitLab CI job by PyYAML, running framekit bench --compare")
    func yaml() throws {
        let jobs = try Fixtures.fencedBlocks("yaml", in: "docs/ci.md")
        #expect(jobs.count == 2)
        for job in jobs {
            let check = """
                import sys, yaml
                doc = yaml.safe_load(sys.stdin.read())
                assert isinstance(doc, dict), "not a mapping"
                text = repr(doc)
                assert "framekit bench" in text and "--compare" in text, "no framekit bench --compare"
                if "jobs" in doc: assert doc["jobs"]["bench"]["steps"], "no steps"
                else: assert doc["bench"]["script"], "no script"
                """
            let file = Fixtures.temporaryFolder("docs").appendingPathComponent("job.yaml")
            try job.write(to: file, atomically: true, encoding: .utf8)
            let run = try BinaryRunner.runTool("/bin/sh", ["-c", "/usr/bin/python3 -c '\(check)' < '\(file.path)'"])
            #expect(run.status == 0, "\(run.stderr)\n\(job.prefix(200))")
        }
    }

    @Test("every framekit bench command in the doc parses with bench's options (a typo would be exit 64)")
    func commands() throws {
        let text = try String(contentsOf: Fixtures.packageRoot.appendingPathComponent("docs/ci.md"), encoding: .utf8)
        // Commands as written, continuation lines joined (`\` in shell, indentation in YAML).
        let joined = text.replacingOccurrences(of: "\\\n", with: " ").replacingOccurrences(of: "\n        --", with: " --")
        let commands = joined.split(separator: "\n").compactMap { line -> [String]? in
            guard let range = line.range(of: "framekit bench ") else { return nil }
            return line[range.upperBound...].split(separator: " ").map(String.init).filter { !$0.isEmpty }
        }
        #expect(commands.count >= 3, "\(commands)")
        for arguments in commands {
            #expect(throws: Never.self, "\(arguments)") {
                try ParsedOptions(arguments, specs: BenchCommand.specs, command: "framekit bench")
            }
        }
    }
}
