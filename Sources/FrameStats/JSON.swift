import Foundation

/// JSON with keys in the order written (the output contract reads better that way), numbers
/// rounded to what they mean.
package indirect enum JSON: Sendable {
    case object([(String, JSON)])
    case array([JSON])
    case string(String)
    case int(Int)
    case number(Double, decimals: Int)
    case bool(Bool)
    case null

    package var text: String {
        switch self {
        case .object(let pairs): "{" + pairs.map { "\(JSON.quote($0.0)): \($0.1.text)" }.joined(separator: ", ") + "}"
        case .array(let items): "[" + items.map(\.text).joined(separator: ", ") + "]"
        case .string(let s): JSON.quote(s)
        case .int(let i): String(i)
        case .number(let d, let decimals):
            d.isFinite ? String(format: "%.\(decimals)f", d) : "null"
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        }
    }

    package static func quote(_ s: String) -> String {
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
