/// A hand-written parser in swift-argument-parser's shape: each command declares its options,
/// the parser validates before anything runs, and a usage error is one line and exit 64.
struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A runtime failure: message on stderr, exit 1.
struct RuntimeFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64 // EX_USAGE, swift-argument-parser's validationFailure
    static let cannotCreate: Int32 = 73 // EX_CANTCREAT: an output file could not be created (or exists)
    static let ioError: Int32 = 74 // EX_IOERR: stdout or an output file could not be written
}

struct OptionSpec {
    var name: String // without dashes
    var valueName: String? // nil: a flag
    var help: String
}

/// The parsed options of one command.
struct ParsedOptions {
    private var values: [String: String] = [:]
    private var flags: Set<String> = []

    init(_ arguments: [String], specs: [OptionSpec], command: String) throws {
        var i = 0
        while i < arguments.count {
            let argument = arguments[i]
            guard argument.hasPrefix("--") else { throw UsageError("\(command): unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = specs.first(where: { $0.name == name }) else {
                throw UsageError("\(command): unknown option '--\(name)' (see framekit \(command) --help)")
            }
            // A repeated option is refused rather than silently keeping one of the values.
            guard values[name] == nil, !flags.contains(name) else {
                throw UsageError("\(command): --\(name) is given more than once")
            }
            if spec.valueName == nil {
                guard inline == nil else { throw UsageError("\(command): --\(name) takes no value") }
                flags.insert(name)
            } else if let inline {
                values[name] = inline
            } else {
                guard i + 1 < arguments.count, !arguments[i + 1].hasPrefix("--") else {
                    throw UsageError("\(command): --\(name) needs a value (\(spec.valueName!))")
                }
                i += 1
                values[name] = arguments[i]
            }
            i += 1
        }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }
    func string(_ name: String) -> String? { values[name] }

    func int(_ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let raw = values[name] else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw UsageError("--\(name) must be a whole number in \(range.lowerBound)…\(range.upperBound), got '\(raw)'")
        }
        return value
    }

    func double(_ name: String, range: ClosedRange<Double>) throws -> Double? {
        guard let raw = values[name] else { return nil }
        guard let value = Double(raw), value.isFinite, range.contains(value) else {
            throw UsageError("--\(name) must be a number in \(range.lowerBound)…\(range.upperBound), got '\(raw)'")
        }
        return value
    }
}

func helpText(command: String, abstract: String, usage: String, specs: [OptionSpec]) -> String {
    var lines = ["OVERVIEW: \(abstract)", "", "USAGE: \(usage)", "", "OPTIONS:"]
    for spec in specs {
        let left = "  --\(spec.name)" + (spec.valueName.map { " <\($0)>" } ?? "")
        lines.append(left.padding(toLength: max(left.count + 2, 30), withPad: " ", startingAt: 0) + spec.help)
    }
    lines.append("  --help".padding(toLength: 30, withPad: " ", startingAt: 0) + "Show help for this command.")
    return lines.joined(separator: "\n")
}
