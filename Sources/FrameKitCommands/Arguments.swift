import FrameKit

/// A hand-written parser in swift-argument-parser's shape: each command declares its options,
/// the parser validates before anything runs, and a usage error is one line and exit 64.
package struct UsageError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// A runtime failure: message on stderr, and an exit code that says whether a retry can help.
struct RuntimeFailure: Error, CustomStringConvertible {
    var description: String
    var exitCode: Int32
    init(_ description: String, exitCode: Int32 = ExitCode.failure) {
        self.description = description
        self.exitCode = exitCode
    }
    /// A capture error before capture starts (a file, device or stream that cannot be used).
    init(_ error: CaptureError) { self.init("\(error)", exitCode: ExitCode.code(for: error, whileRunning: false)) }
    init(_ error: any Error) {
        if let capture = error as? CaptureError {
            self.init(capture)
        } else if case .modelLoadFailed = error as? FaceDetectorError {
            // A model file that is not the shipped one, or not a network FrameKit reads: bad data.
            self.init("\(error)", exitCode: ExitCode.dataError)
        } else {
            self.init("\(error)")
        }
    }
}

enum ExitCode {
    /// What a capture error means to a scheduler (Slurm, Kubernetes): bad data will fail again,
    /// an absent device or stream is unavailable, one lost mid-run may come back.
    static func code(for error: CaptureError, whileRunning: Bool) -> Int32 {
        switch error {
        case .unreadableFile, .streamRejected, .pixelBuffer, .formatRejected, .unsupportedPreset, .unsupportedFrameRate: dataError
        // A stream that cannot be reached is EX_TEMPFAIL's own case ("a connection could not be
        // created; try again later"), at the start as during the run.
        case .streamUnavailable: temporaryFailure
        case .deviceLost: whileRunning ? temporaryFailure : unavailable
        case .deviceBusy, .lockedForConfiguration: temporaryFailure
        case .notACaptureDevice, .permissionDenied, .systemCall: whileRunning ? temporaryFailure : unavailable
        default: failure
        }
    }

    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64 // EX_USAGE, swift-argument-parser's validationFailure
    static let dataError: Int32 = 65 // EX_DATAERR: the input is not data FrameKit can read
    static let unavailable: Int32 = 69 // EX_UNAVAILABLE: no such device or stream, or not a camera
    static let temporaryFailure: Int32 = 75 // EX_TEMPFAIL: lost while running; a retry may help
    static let cannotCreate: Int32 = 73 // EX_CANTCREAT: an output file could not be created (or exists)
    static let ioError: Int32 = 74 // EX_IOERR: stdout or an output file could not be written
}

/// What an option's value must be. Checked when the arguments are parsed, before the command
/// does anything; the same declaration writes `--help` and docs/cli.md's option tables.
package enum ValueKind: Sendable, Equatable {
    case flag
    case text
    case integer(ClosedRange<Int>)
    case number(ClosedRange<Double>)
    case choice([String])
}

/// One option's declaration: name (without dashes), value name, help, and the value it takes.
package struct OptionSpec: Sendable {
    package var name: String
    package var valueName: String? // nil: a flag
    package var help: String
    package var kind: ValueKind
    /// May be given more than once (each value kept, in order); other options may not.
    package var repeatable = false

    /// Why `raw` is not a value of this option, or nil when it is.
    package func problem(with raw: String) -> String? {
        switch kind {
        case .flag, .text: return nil
        case .integer(let range):
            guard let value = Int(raw), range.contains(value) else {
                return "--\(name) must be a whole number in \(range.lowerBound)…\(range.upperBound), got '\(raw)'"
            }
        case .number(let range):
            guard let value = Double(raw), value.isFinite, range.contains(value) else {
                return "--\(name) must be a number in \(decimal(range.lowerBound))…\(decimal(range.upperBound)), got '\(raw)'"
            }
        case .choice(let values):
            guard values.contains(raw) else {
                return "--\(name) must be \(values.dropLast().joined(separator: ", ")) or \(values.last ?? ""), got '\(raw)'"
            }
        }
        return nil
    }
}

/// A bound as people write it: 10000000, not 1e+07 or 10000000.0.
package func decimal(_ value: Double) -> String {
    value.rounded() == value && abs(value) < 1e15 ? String(Int(value)) : String(value)
}

/// A typed handle on an option: commands read `options[Self.frames]` (an `Int?`) instead of
/// looking a string up and converting it. The conversion cannot fail there: the parser has
/// already checked every value against its declaration.
package struct Option<Value: Sendable>: Sendable {
    package let spec: OptionSpec
    package let convert: @Sendable (String) -> Value?

    package init(spec: OptionSpec, convert: @escaping @Sendable (String) -> Value?) {
        self.spec = spec
        self.convert = convert
    }

    package var name: String { spec.name }
}

extension Option where Value == String {
    package static func text(_ name: String, _ valueName: String, help: String) -> Self {
        Self(spec: OptionSpec(name: name, valueName: valueName, help: help, kind: .text)) { $0 }
    }
    /// A text option that may be repeated; read every value with ``ParsedOptions/all(_:)``.
    package static func repeatable(_ name: String, _ valueName: String, help: String) -> Self {
        var spec = OptionSpec(name: name, valueName: valueName, help: help, kind: .text)
        spec.repeatable = true
        return Self(spec: spec) { $0 }
    }
    package static func choice(_ name: String, _ values: [String], help: String) -> Self {
        Self(spec: OptionSpec(name: name, valueName: values.joined(separator: "|"), help: help, kind: .choice(values))) { $0 }
    }
}

extension Option where Value == Int {
    package static func integer(_ name: String, _ valueName: String, _ range: ClosedRange<Int>, help: String) -> Self {
        Self(spec: OptionSpec(name: name, valueName: valueName, help: help, kind: .integer(range))) { Int($0) }
    }
}

extension Option where Value == Double {
    package static func number(_ name: String, _ valueName: String, _ range: ClosedRange<Double>, help: String) -> Self {
        Self(spec: OptionSpec(name: name, valueName: valueName, help: help, kind: .number(range))) { Double($0) }
    }
}

/// An option without a value.
package struct Flag: Sendable {
    package let spec: OptionSpec
    package init(_ name: String, help: String) { spec = OptionSpec(name: name, valueName: nil, help: help, kind: .flag) }
}

/// The parsed options of one command.
package struct ParsedOptions {
    private var values: [String: String] = [:]
    private var repeated: [String: [String]] = [:]
    private var flags: Set<String> = []

    /// Parses `arguments` against `specs`. Messages name no program (the caller prefixes it);
    /// `command` is how to invoke the program in the "see … --help" hint ("framekit detect").
    package init(_ arguments: [String], specs: [OptionSpec], command: String) throws {
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            guard argument.hasPrefix("--") else { throw UsageError("unexpected argument '\(argument)' (see \(command) --help)") }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)' (see \(command) --help)")
            }
            // A repeated option is refused rather than silently keeping one of the values.
            guard spec.repeatable || (values[name] == nil && !flags.contains(name)) else {
                throw UsageError("--\(name) is given more than once")
            }
            if spec.kind == .flag {
                guard inline == nil else { throw UsageError("--\(name) takes no value") }
                flags.insert(name)
            } else {
                let value: String
                if let inline {
                    value = inline
                } else {
                    guard i + 1 < arguments.count, !arguments[i + 1].hasPrefix("--") else {
                        throw UsageError("--\(name) needs a value (\(spec.valueName ?? "a value"))")
                    }
                    i += 1
                    value = arguments[i]
                }
                if let problem = spec.problem(with: value) { throw UsageError(problem) }
                values[name] = value
                repeated[name, default: []].append(value)
            }
            i += 1
        }
    }

    package subscript<Value>(_ option: Option<Value>) -> Value? { values[option.name].flatMap(option.convert) }
    package subscript(_ flag: Flag) -> Bool { flags.contains(flag.spec.name) }
    /// Every value of a repeatable option, in the order given.
    package func all<Value>(_ option: Option<Value>) -> [Value] { (repeated[option.name] ?? []).compactMap(option.convert) }
    /// Whether the option was given at all (for options that apply only with others).
    package func has(_ spec: OptionSpec) -> Bool { values[spec.name] != nil || flags.contains(spec.name) }
}

/// `--help` for one command: each option's help after its name, wrapped at 100 columns.
package func helpText(command: String, abstract: String, usage: String, specs: [OptionSpec]) -> String {
    var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage)", "", "OPTIONS:"]
    let column = 30
    let width = 100
    let indent = String(repeating: " ", count: 30)
    for spec in specs + [OptionSpec(name: "help", valueName: nil, help: "Show help for this command.", kind: .flag)] {
        let left = "  --\(spec.name)" + (spec.valueName.map { " <\($0)>" } ?? "")
        var line = indent
        if left.count + 2 <= column { line = left.padding(toLength: column, withPad: " ", startingAt: 0) } else { lines.append(left) }
        var empty = true // no word on this line yet
        for word in spec.help.split(separator: " ") {
            if !empty && line.count + 1 + word.count > width {
                lines.append(line)
                line = indent
                empty = true
            }
            line += (empty ? "" : " ") + word
            empty = false
        }
        lines.append(line)
    }
    return lines.joined(separator: "\n")
}

/// One command's option table for docs/cli.md, from the same declarations as `--help`
/// (`framekit help --markdown` prints them all; a test keeps the docs in step).
package func markdownOptions(specs: [OptionSpec]) -> String {
    func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }
    var lines = ["| option | value | meaning |", "|---|---|---|"]
    for spec in specs {
        let value: String
        switch spec.kind {
        case .flag: value = "—"
        case .text: value = "`\(cell(spec.valueName ?? ""))`"
        case .integer(let range):
            let upper = range.upperBound == Int.max ? "" : "\(range.upperBound)"
            value = "`\(spec.valueName ?? "N")`: \(range.lowerBound)…\(upper)"
        case .number(let range): value = "`\(spec.valueName ?? "X")`: \(decimal(range.lowerBound))…\(decimal(range.upperBound))"
        case .choice(let values): value = values.map { "`\($0)`" }.joined(separator: ", ")
        }
        lines.append("| `--\(spec.name)` | \(value) | \(cell(spec.help)) |")
    }
    return lines.joined(separator: "\n")
}
