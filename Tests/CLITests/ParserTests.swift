import Foundation
import Testing

@testable import FrameKitCommands

/// The parser and the command table, called directly (the binary's behaviour is in
/// CommandLineTests and the fault suites, FaultSuite).
@Suite("framekit's parser, in process")
struct ParserTests {
    @Test("every command has a unique name, unique options, and a --help that lists each of them")
    func commandTable() {
        let names = FrameKitCommandLine.commands.map { $0.name }
        #expect(Set(names).count == names.count && names.count == 8)
        for command in FrameKitCommandLine.commands {
            let options = command.specs.map(\.name)
            #expect(Set(options).count == options.count, "\(command.name) declares an option twice")
            let help = command.help
            #expect(help.hasPrefix("OVERVIEW: \(command.abstract)") && help.contains("USAGE: framekit \(command.name)"))
            for option in options { #expect(help.contains("--\(option)"), "\(command.name) --help misses --\(option)") }
            #expect(FrameKitCommandLine.rootHelp.contains(command.name))
        }
    }

    static let frames = Option.integer("frames", "N", 1...100, help: "frames")
    static let rate = Option.number("rate", "FPS", 1...240, help: "rate")
    static let mode = Option.choice("mode", ["fast", "slow"], help: "mode")
    static let json = Flag("json", help: "a flag")
    static let specs = [frames.spec, rate.spec, mode.spec, json.spec]

    @Test("values: separate or inline, typed, and checked against their declaration when parsed")
    func values() throws {
        let options = try ParsedOptions(["--frames", "12", "--rate=29.97", "--json", "--mode", "slow"], specs: Self.specs, command: "t")
        #expect(options[Self.frames] == 12 && options[Self.rate] == 29.97 && options[Self.mode] == "slow")
        #expect(options[Self.json] && options.has(Self.frames.spec))
        let none = try ParsedOptions([], specs: Self.specs, command: "t")
        #expect(none[Self.frames] == nil && !none[Self.json] && !none.has(Self.rate.spec))
        for (arguments, message) in [
            (["--frames", "101"], "--frames must be a whole number in 1…100, got '101'"),
            (["--rate", "fast"], "--rate must be a number in 1…240, got 'fast'"),
            (["--rate", "inf"], "--rate must be a number in 1…240, got 'inf'"),
            (["--mode", "medium"], "--mode must be fast or slow, got 'medium'")
        ] {
            let error = try #require(throws: UsageError.self) { try ParsedOptions(arguments, specs: Self.specs, command: "t") }
            #expect(error.description == message)
        }
    }

    @Test("docs/cli.md's option tables are what the declarations write (framekit help --markdown)")
    func docsTables() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/cli.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        for command in FrameKitCommandLine.commands {
            let block = FrameKitCommandLine.markdown(for: command.name)
            #expect(
                text.contains(block),
                "docs/cli.md's \(command.name) table is stale; paste `framekit help --markdown \(command.name)`:\n\(block)")
        }
    }

    @Test(
        "usage errors: unknown, repeated, valueless, a flag with a value, a stray argument",
        arguments: [["--nope"], ["--frames", "1", "--frames", "2"], ["--frames"], ["--frames", "--json"], ["--json=yes"], ["stray"]])
    func usageErrors(arguments: [String]) throws {
        let error = try #require(throws: UsageError.self) { try ParsedOptions(arguments, specs: Self.specs, command: "framekit t") }
        // One message, no program name in it (the entry point prefixes "framekit t: " once).
        #expect(!error.description.hasPrefix("t:") && !error.description.contains("framekit t:"), "\(error)")
        if arguments == ["--nope"] { #expect(error.description == "unknown option '--nope' (see framekit t --help)") }
    }

    @Test("a repeatable option keeps every value in order; the others still refuse a second one")
    func repeatable() throws {
        let control = Option.repeatable("control", "NAME=VALUE", help: "h")
        let frames = Option.integer("frames", "N", 1...10, help: "h")
        let parsed = try ParsedOptions(
            ["--control", "a=1", "--frames", "3", "--control=b=2"], specs: [control.spec, frames.spec], command: "framekit t")
        #expect(parsed.all(control) == ["a=1", "b=2"] && parsed[frames] == 3)
        #expect(throws: UsageError.self) {
            try ParsedOptions(["--frames", "1", "--control", "a=1", "--frames", "2"], specs: [control.spec, frames.spec], command: "t")
        }
    }

    @Test("the entry point: exit 64 for a usage error, 0 for --version and --help")
    func entryPoint() {
        #expect(FrameKitCommandLine.run([]) == ExitCode.usage)
        #expect(FrameKitCommandLine.run(["nonsense"]) == ExitCode.usage)
        #expect(FrameKitCommandLine.run(["detect", "--frames", "0"]) == ExitCode.usage)
        #expect(FrameKitCommandLine.run(["record", "--output", "x.mov", "--frames", "1", "--frames", "2"]) == ExitCode.usage)
        #expect(FrameKitCommandLine.run(["--version"]) == ExitCode.success)
        #expect(FrameKitCommandLine.run(["devices", "--help"]) == ExitCode.success)
    }
}
