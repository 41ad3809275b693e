import Foundation
import FrameTestSupport
import Testing

@testable import FrameKitCommands

/// The manual page and the completion scripts `scripts/install` and the Debian package put in
/// place, written by the binary (`framekit help --man`, `--completion bash|zsh`) and read by
/// the real tools: groff, bash's completion, zsh's parser.
@Suite("framekit's manual page and shell completion")
struct ShellIntegrationTests {
    @Test("framekit help --man is a page groff formats without a warning, with every command and option")
    func manualPage() throws {
        let run = try BinaryRunner.run("framekit", ["help", "--man"])
        #expect(run.status == 0 && run.stdout.hasPrefix(".TH FRAMEKIT 1"))
        let groff = try BinaryRunner.runTool("/usr/bin/groff", ["-man", "-ww", "-z", "-Tutf8"], stdin: run.stdout)
        #expect(groff.status == 0 && groff.stderr.isEmpty, "groff: \(groff.stderr)")
        let page = try BinaryRunner.runTool("/usr/bin/groff", ["-man", "-Tutf8", "-P", "-cbou"], stdin: run.stdout).stdout
        for command in FrameKitCommandLine.commands {
            #expect(page.contains("framekit \(command.name)"), "the page has no section for \(command.name)")
            for spec in command.specs {
                #expect(page.contains("--\(spec.name)"), "the page misses \(command.name) --\(spec.name)")
            }
        }
        // Non-ASCII help text comes through as the characters, not as Latin-1 bytes.
        #expect(page.contains("virtual:3…") && page.contains("EXIT STATUS") && page.contains("FRAMEKIT_MODELS"))
    }

    @Test("roff escaping: backslashes, hyphens, leading dots and non-ASCII are literal")
    func escaping() {
        #expect(ManualPage.escaped(#"a\b --x"#) == #"a\eb \-\-x"#)
        #expect(ManualPage.escaped(".start\n'quote") == #"\&.start"# + "\n" + #"\&'quote"#)
        #expect(ManualPage.escaped("1…2 ×") == #"1\[u2026]2 \[u00D7]"#)
    }

    /// What bash's completion offers after `words` (the cursor on the last one).
    private func bashCompletions(_ words: [String]) throws -> [String] {
        let script = try BinaryRunner.run("framekit", ["help", "--completion", "bash"])
        try #require(script.status == 0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("framekit-completion-\(UUID().uuidString).bash")
        try script.stdout.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let program = """
            source '\(file.path)'
            COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _framekit
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let run = try BinaryRunner.runTool("/bin/bash", ["--norc", "-c", program])
        try #require(run.status == 0, "bash: \(run.stderr)")
        return run.lines
    }

    @Test("bash completes subcommands, a command's options, and the values of a fixed-choice option")
    func bashCompletion() throws {
        #expect(try bashCompletions(["framekit", "de"]) == ["detect", "devices"])
        #expect(try bashCompletions(["framekit", "detect", "--pre"]) == ["--preset"])
        #expect(try bashCompletions(["framekit", "detect", "--detector", ""]) == ["cnn", "haar"])
        #expect(try bashCompletions(["framekit", "record", "--preset", "hd"]).contains("hd1280x720"))
        // After an option that takes a path, nothing of its own: bash's default completes files.
        #expect(try bashCompletions(["framekit", "detect", "--input", ""]).isEmpty)
        #expect(try bashCompletions(["framekit", "help", "--completion", ""]) == ["bash", "zsh"])
        // Every option of every command is offered after its "--".
        for command in FrameKitCommandLine.commands {
            let offered = Set(try bashCompletions(["framekit", command.name, "--"]))
            #expect(offered == Set(command.specs.map { "--" + $0.name } + ["--help"]), "\(command.name)")
        }
    }

    @Test("the zsh script is one zsh parses, with a _arguments line for each option")
    func zshCompletion() throws {
        let script = try BinaryRunner.run("framekit", ["help", "--completion", "zsh"])
        #expect(script.status == 0 && script.stdout.hasPrefix("#compdef framekit"))
        for command in FrameKitCommandLine.commands {
            for spec in command.specs { #expect(script.stdout.contains("--\(spec.name)["), "\(command.name) --\(spec.name)") }
        }
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "scripts/bootstrap --tests installs zsh")
        let parsed = try BinaryRunner.runTool("/usr/bin/zsh", ["-n", "-c", script.stdout])
        #expect(parsed.status == 0, "zsh -n: \(parsed.stderr)")
    }

    @Test("help --completion without a known shell is a usage error naming what was given")
    func unknownShell() throws {
        for (arguments, words) in [
            (["help", "--completion"], "needs a shell"), (["help", "--completion", "fish"], "no completion for 'fish'")
        ] {
            let run = try BinaryRunner.run("framekit", arguments)
            #expect(run.status == 64 && run.stderr.contains("valid: bash, zsh") && run.stderr.contains(words), "\(run.stderr)")
        }
    }
}
