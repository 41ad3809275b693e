import Foundation
import FrameKit

// framekit: the command line. Subcommands in swift-argument-parser's shape (docs/cli.md).
let version = "0.1.0"

struct Subcommand {
    var name: String
    var abstract: String
    var usage: String
    var specs: [OptionSpec]
    var run: ([String]) throws -> Int32
}

let subcommands = [
    Subcommand(
        name: "detect", abstract: DetectCommand.abstract, usage: DetectCommand.usage, specs: DetectCommand.specs, run: DetectCommand.run),
    Subcommand(
        name: "devices", abstract: DevicesCommand.abstract, usage: DevicesCommand.usage, specs: DevicesCommand.specs,
        run: DevicesCommand.run),
    Subcommand(name: "photo", abstract: PhotoCommand.abstract, usage: PhotoCommand.usage, specs: PhotoCommand.specs, run: PhotoCommand.run),
    Subcommand(
        name: "record", abstract: RecordCommand.abstract, usage: RecordCommand.usage, specs: RecordCommand.specs, run: RecordCommand.run),
    Subcommand(
        name: "preview", abstract: PreviewCommand.abstract, usage: PreviewCommand.usage, specs: PreviewCommand.specs,
        run: PreviewCommand.run),
    Subcommand(
        name: "profile", abstract: ProfileCommand.abstract, usage: ProfileCommand.usage, specs: ProfileCommand.specs,
        run: ProfileCommand.run)
]

@MainActor func rootHelp() -> String {
    ([
        "OVERVIEW: FrameKit — real-time frame capture and analysis on Linux.", "",
        "USAGE: framekit <subcommand> [options]", "", "SUBCOMMANDS:"
    ]
        + subcommands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.abstract }
        + ["", "  See 'framekit <subcommand> --help' for its options.", "  --version    Show the version."])
        .joined(separator: "\n")
}

@MainActor func main() -> Int32 {
    Console.ignoreBrokenPipes()
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard let first = arguments.first else {
        Console.err("framekit: missing subcommand (see framekit --help)")
        return ExitCode.usage
    }
    if first == "--help" || first == "-h" || first == "help" {
        Console.out(rootHelp())
        return ExitCode.success
    }
    if first == "--version" {
        Console.out(version)
        return ExitCode.success
    }
    guard let command = subcommands.first(where: { $0.name == first }) else {
        Console.err("framekit: unknown subcommand '\(first)' (valid: \(subcommands.map(\.name).joined(separator: ", ")))")
        return ExitCode.usage
    }
    let rest = Array(arguments.dropFirst())
    if rest.contains("--help") || rest.contains("-h") {
        Console.out(helpText(command: command.name, abstract: command.abstract, usage: command.usage, specs: command.specs))
        return ExitCode.success
    }
    do {
        let status = try command.run(rest)
        if let failure = Console.outputFailure {
            Console.err("framekit \(command.name): cannot write to stdout: \(failure)")
            return ExitCode.ioError
        }
        return status
    } catch let error as OutputFile.Failure {
        Console.err("framekit \(command.name): \(error)")
        return error.exitCode
    } catch let error as UsageError {
        Console.err("framekit \(command.name): \(error)")
        return ExitCode.usage
    } catch {
        Console.err("framekit \(command.name): \(error)")
        return ExitCode.failure
    }
}

exit(main())
