import Testing

@testable import FrameKitCommands

/// The parser and the command table, called directly (the binary's behaviour is in
/// CommandLineTests and FaultTests).
@Suite("framekit's parser, in process")
struct ParserTests {
    @Test("every command has a unique name, unique options, and a --help that lists each of them")
    func commandTable() {
        let names = FrameKitCommandLine.commands.map { $0.name }
        #expect(Set(names).count == names.count && names.count == 6)
        for command in FrameKitCommandLine.commands {
            let options = command.specs.map(\.name)
            #expect(Set(options).count == options.count, "\(command.name) declares an option twice")
            let help = command.help
            #expect(help.hasPrefix("OVERVIEW: \(command.abstract)") && help.contains("USAGE: framekit \(command.name)"))
            for option in options { #expect(help.contains("--\(option)"), "\(command.name) --help misses --\(option)") }
            #expect(FrameKitCommandLine.rootHelp.contains(command.name))
        }
    }

    static let specs = [
        OptionSpec(name: "frames", valueName: "N", help: "frames"),
        OptionSpec(name: "rate", valueName: "FPS", help: "rate"),
        OptionSpec(name: "json", valueName: nil, help: "a flag")
    ]

    @Test("values: separate, inline, typed and range-checked")
    func values() throws {
        let options = try ParsedOptions(["--frames", "12", "--rate=29.97", "--json"], specs: Self.specs, command: "t")
        #expect(try options.int("frames", range: 1...100) == 12)
        #expect(try options.double("rate", range: 1...240) == 29.97)
        #expect(options.flag("json") && options.string("missing") == nil)
        #expect(throws: UsageError.self) { try options.int("frames", range: 1...10) }
        let text = try ParsedOptions(["--rate", "fast"], specs: Self.specs, command: "t")
        let error = try #require(throws: UsageError.self) { try text.double("rate", range: 1...240) }
        #expect(error.description.contains("--rate") && error.description.contains("'fast'"))
    }

    @Test(
        "usage errors: unknown, repeated, valueless, a flag with a value, a stray argument",
        arguments: [["--nope"], ["--frames", "1", "--frames", "2"], ["--frames"], ["--frames", "--json"], ["--json=yes"], ["stray"]])
    func usageErrors(arguments: [String]) {
        #expect(throws: UsageError.self) { try ParsedOptions(arguments, specs: Self.specs, command: "t") }
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
