import Foundation

/// JSON with keys in the order written (the output contract reads better that way), numbers
/// rounded to what they mean.
indirect enum JSON {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case int(Int)
    case number(Double, decimals: Int)
    case bool(Bool)
    case null

    var text: String {
        switch self {
        case let .object(pairs): "{" + pairs.map { "\(JSON.quote($0.0)): \($0.1.text)" }.joined(separator: ", ") + "}"
        case let .array(items): "[" + items.map(\.text).joined(separator: ", ") + "]"
        case let .string(s): JSON.quote(s)
        case let .int(i): String(i)
        case let .number(d, decimals):
            d.isFinite ? String(format: "%.\(decimals)f", d) : "null"
        case let .bool(b): b ? "true" : "false"
        case .null: "null"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// Line-buffered writes to stdout/stderr without Foundation's print locking surprises.
enum Console {
    static func out(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
    static func err(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
}
