import Foundation

/// Why a benchmark's file could not be used, or a run could not be made.
public enum BenchmarkError: Error, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    case notABaseline(path: String, reason: String)
    case notATruthFile(path: String, reason: String)
    /// An input could not be opened or read, or its run failed.
    case runFailed(input: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .notABaseline(let path, let reason): "\(path): \(reason)"
        case .notATruthFile(let path, let reason): "\(path) is not a truth file: \(reason) (docs/ci.md gives the formats)"
        case .runFailed(let input, let reason): "\(input): \(reason)"
        }
    }
}

extension BenchmarkError {
    /// `path`'s bytes, or ``unreadable(path:reason:)`` saying why: missing, a folder, or not
    /// readable.
    static func contents(of path: String) throws(BenchmarkError) -> Data {
        if let data = FileManager.default.contents(atPath: path) { return data }
        var isFolder: ObjCBool = false
        let reason =
            !FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            ? "no such file" : isFolder.boolValue ? "it is a folder" : "not readable (permissions?)"
        throw .unreadable(path: path, reason: reason)
    }
}
