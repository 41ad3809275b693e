import Foundation
import FrameKit

/// One subcommand: its name, one-line abstract, usage line and options (which give both its
/// parsing and its `--help`), and what it does with the arguments after its name.
protocol Command: SendableMetatype {
    static var name: String { get }
    static var abstract: String { get }
    static var usage: String { get }
    static var specs: [OptionSpec] { get }
    /// Runs with the arguments after the subcommand's name; returns the exit status.
    static func run(_ arguments: [String]) throws -> Int32
    /// Whether SIGINT/SIGTERM end it cleanly (it watches for them): they are then caught from
    /// the start, so that one during start-up is not the default death.
    static var stopsOnInterrupt: Bool { get }
}

extension Command {
    static var stopsOnInterrupt: Bool { false }
    static var help: String { helpText(command: name, abstract: abstract, usage: usage, specs: specs) }
}

/// `framekit`, as a library: the executable is one call to ``run(_:)``, and tests call it (and
/// the parser) directly as well as through the binary.
public enum FrameKitCommandLine {
    public static let version = FrameKitVersion.current

    static let commands: [any Command.Type] = [
        DetectCommand.self, DevicesCommand.self, PhotoCommand.self, RecordCommand.self, PreviewCommand.self, ProfileCommand.self,
        MergeCommand.self, BenchCommand.self
    ]

    static var rootHelp: String {
        ([
            "OVERVIEW: FrameKit — real-time frame capture and analysis on Linux.", "",
            "USAGE: framekit <subcommand> [options]", "", "SUBCOMMANDS:"
        ]
            + commands.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.abstract }
            + [
                "", "  See 'framekit <subcommand> --help' for its options.", "  --version    Show the version.",
                "  help --man   Print the manual page (roff); help --completion bash|zsh prints a completion script."
            ])
            .joined(separator: "\n")
    }

    /// docs/cli.md's option tables (`framekit help --markdown [COMMAND]`), each between the
    /// markers the docs test looks for.
    static func markdown(for name: String?) -> String {
        commands.filter { name == nil || $0.name == name }.map { command in
            "<!-- options: \(command.name) -->\n" + markdownOptions(specs: command.specs) + "\n<!-- /options -->"
        }.joined(separator: "\n\n")
    }

    /// The executable's entry: ``run(_:)``, with SIGINT and SIGTERM caught from the start for
    /// the commands that stop cleanly on them, so that one during start-up (opening the camera,
    /// loading the model) still ends the run with its summary (a second one kills at once). Not
    /// part of `run`: a program or test calling it in-process keeps its own signal handling.
    public static func main(_ arguments: [String]) -> Int32 {
        // glibc's mmap threshold fixed at 64 KiB for every command, not only those that run a
        // preview feed (which fixes it too): see GlibcMalloc.fixMmapThreshold.
        GlibcMalloc.fixMmapThreshold()
        if let first = arguments.first, command(named: first)?.stopsOnInterrupt == true, !arguments.contains("--help"),
            !arguments.contains("-h")
        {
            SignalWatch.install()
        }
        return run(arguments)
    }

    /// The subcommand called `name`.
    private static func command(named name: String) -> (any Command.Type)? {
        // A closure, not `\.name`: a key path to a static member through `any Command.Type`
        // crashes Swift 6.3.1's SIL generation (signal 11).
        commands.first { $0.name == name }
    }

    /// Prints help or the version: 0, or 74 when stdout cannot take it (a full disk, closed).
    private static func printed(_ text: String) -> Int32 {
        Console.out(text)
        guard let failure = Console.outputFailure else { return ExitCode.success }
        Console.err("framekit: cannot write to stdout: \(failure)")
        return ExitCode.ioError
    }

    /// Runs `framekit` with `arguments` (without the program's name); returns the exit status:
    /// 0 done, 1 a runtime failure, 64 a usage error, 73 an output that cannot be created, 74
    /// stdout or an output that cannot be written.
    public static func run(_ arguments: [String]) -> Int32 {
        Console.ignoreBrokenPipes()
        guard let first = arguments.first else {
            Console.err("framekit: missing subcommand (see framekit --help)")
            return ExitCode.usage
        }
        if first == "help" && arguments.dropFirst().first == "--markdown" {
            return printed(markdown(for: arguments.dropFirst(2).first))
        }
        if first == "help" && arguments.dropFirst().first == "--man" {
            return printed(ManualPage.text(commands: commands, version: version))
        }
        if first == "help" && arguments.dropFirst().first == "--completion" {
            let valid = CompletionScript.Shell.allCases.map(\.rawValue).joined(separator: ", ")
            guard let name = arguments.dropFirst(2).first else {
                Console.err("framekit help: --completion needs a shell (valid: \(valid))")
                return ExitCode.usage
            }
            guard let shell = CompletionScript.Shell(rawValue: name) else {
                Console.err("framekit help: --completion: no completion for '\(name)' (valid: \(valid))")
                return ExitCode.usage
            }
            return printed(CompletionScript.text(for: shell, commands: commands))
        }
        if first == "help", let name = arguments.dropFirst().first {
            guard let command = command(named: name) else {
                Console.err("framekit: no subcommand '\(name)' to help with (valid: \(commands.map { $0.name }.joined(separator: ", ")))")
                return ExitCode.usage
            }
            return printed(command.help)
        }
        if first == "--help" || first == "-h" || first == "help" {
            return printed(rootHelp)
        }
        if first == "--version" {
            return printed(version)
        }
        guard let command = command(named: first) else {
            Console.err("framekit: unknown subcommand '\(first)' (valid: \(commands.map { $0.name }.joined(separator: ", ")))")
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            return printed(command.help)
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
        } catch let error as RuntimeFailure {
            Console.err("framekit \(command.name): \(error)")
            return error.exitCode
        } catch {
            Console.err("framekit \(command.name): \(error)")
            return ExitCode.failure
        }
    }
}
