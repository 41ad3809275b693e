/// Why a benchmark's file could not be used, or a run could not be made.
public enum BenchmarkError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String)
    case notABaseline(path: String, reason: String)
    case notATruthFile(path: String, reason: String)
    /// An input could not be opened or read, or its run failed.
    case runFailed(input: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path)"
        case .notABaseline(let path, let reason): "\(path): \(reason)"
        case .notATruthFile(let path, let reason): "\(path) is not a truth file: \(reason) (docs/ci.md gives the formats)"
        case .runFailed(let input, let reason): "\(input): \(reason)"
        }
    }
}
