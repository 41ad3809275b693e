import Foundation
import FrameCore

/// The true faces of an input, by frame number (the `frame` detect prints: 0 for the first),
/// read from one of three formats (docs/ci.md):
/// - JSON lines, one a frame: `{"frame": 12, "faces": [[x, y, width, height], ...], "ignore": [[...]]}`
///   (frames not listed hold no face; `ignore` optional);
/// - a JSON array with one element a frame, each an array of `{"box": {"x", "y", "width",
///   "height"}, "ignored": false}` (what `framekit-bench --keep-clips` writes beside its clips);
/// - COCO (`images` and `annotations` with `bbox` [x, y, width, height]; `iscrowd` 1 is ignored):
///   images taken in the order of their `file_name`, as a folder's photos are read.
public struct FaceTruth: Sendable {
    public var frames: [Int: [TruthFace]]
    /// The highest frame number the file speaks of (frames up to it without faces are empty).
    public var lastFrame: Int

    public init(frames: [Int: [TruthFace]]) {
        self.frames = frames
        lastFrame = frames.keys.max() ?? -1
    }

    /// Reads a truth file in any of the three formats; ``BenchmarkError`` names the file and
    /// what is wrong with it.
    public static func read(_ path: String) throws(BenchmarkError) -> FaceTruth {
        let data = try BenchmarkError.contents(of: path)
        do { return try parse(data) } catch { throw .notATruthFile(path: path, reason: error.text) }
    }

    struct TruthProblem: Error { var text: String }

    static func parse(_ data: Data) throws(TruthProblem) -> FaceTruth {
        let whole = try? JSONSerialization.jsonObject(with: data)
        if let list = whole as? [Any] { return try perFrameArray(list) }
        if let object = whole as? [String: Any], object["images"] != nil || object["annotations"] != nil { return try coco(object) }
        return try jsonLines(data)
    }

    static func box(_ value: Any?, _ place: String) throws(TruthProblem) -> Rect {
        guard let numbers = value as? [Any], numbers.count == 4 else {
            throw TruthProblem(text: "\(place): a box is [x, y, width, height]")
        }
        var v: [Int] = []
        for number in numbers {
            guard let n = (number as? NSNumber)?.doubleValue, n.isFinite, abs(n) < 1e7 else {
                throw TruthProblem(text: "\(place): a box holds \(number)")
            }
            v.append(Int(n.rounded()))
        }
        guard v[2] > 0, v[3] > 0 else { throw TruthProblem(text: "\(place): a box of \(v[2])x\(v[3])") }
        return Rect(x: v[0], y: v[1], width: v[2], height: v[3])
    }

    static func jsonLines(_ data: Data) throws(TruthProblem) -> FaceTruth {
        var frames: [Int: [TruthFace]] = [:]
        for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() {
            let place = "line \(index + 1)"
            guard !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) else { continue }
            guard let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
                throw TruthProblem(text: "\(place) is not a JSON object")
            }
            guard let frame = object["frame"] as? Int, frame >= 0, frame < 100_000_000 else {
                throw TruthProblem(text: "\(place): \"frame\" is a frame number (0 for the first)")
            }
            guard frames[frame] == nil else { throw TruthProblem(text: "\(place): frame \(frame) is given twice") }
            var faces: [TruthFace] = []
            for value in object["faces"] as? [Any] ?? [] { faces.append(TruthFace(box: try box(value, place))) }
            for value in object["ignore"] as? [Any] ?? [] { faces.append(TruthFace(box: try box(value, place), ignored: true)) }
            frames[frame] = faces
        }
        guard !frames.isEmpty else { throw TruthProblem(text: "no frame in it") }
        return FaceTruth(frames: frames)
    }

    static func perFrameArray(_ list: [Any]) throws(TruthProblem) -> FaceTruth {
        var frames: [Int: [TruthFace]] = [:]
        for (frame, entry) in list.enumerated() {
            guard let faces = entry as? [[String: Any]] else { throw TruthProblem(text: "element \(frame) is not a list of faces") }
            frames[frame] = try faces.map { (face) throws(TruthProblem) -> TruthFace in
                guard let b = face["box"] as? [String: Any] else { throw TruthProblem(text: "element \(frame): a face without \"box\"") }
                let rect = try box([b["x"] as Any, b["y"] as Any, b["width"] as Any, b["height"] as Any], "element \(frame)")
                return TruthFace(box: rect, ignored: face["ignored"] as? Bool ?? false)
            }
        }
        guard !frames.isEmpty else { throw TruthProblem(text: "an empty list") }
        return FaceTruth(frames: frames)
    }

    static func coco(_ object: [String: Any]) throws(TruthProblem) -> FaceTruth {
        guard let images = object["images"] as? [[String: Any]], !images.isEmpty else { throw TruthProblem(text: "COCO without images") }
        var order: [(name: String, id: Int)] = []
        for image in images {
            guard let id = image["id"] as? Int else { throw TruthProblem(text: "a COCO image without an integer id") }
            order.append((image["file_name"] as? String ?? String(format: "%012d", id), id))
        }
        let frameOf = Dictionary(
            order.sorted { $0.name < $1.name }.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { first, _ in first })
        var frames = Dictionary(uniqueKeysWithValues: frameOf.values.map { ($0, [TruthFace]()) })
        for (index, annotation) in (object["annotations"] as? [[String: Any]] ?? []).enumerated() {
            guard let id = annotation["image_id"] as? Int, let frame = frameOf[id] else {
                throw TruthProblem(text: "annotation \(index) names no image of the file")
            }
            let rect = try box(annotation["bbox"], "annotation \(index)")
            frames[frame, default: []].append(TruthFace(box: rect, ignored: (annotation["iscrowd"] as? Int ?? 0) == 1))
        }
        return FaceTruth(frames: frames)
    }

    /// The faces a run found, frame by frame (detect's JSON lines), against this truth. Frames
    /// the truth does not reach are not scored.
    public func score(_ found: [Int: [Rect]]) -> Accuracy {
        var accuracy = Accuracy()
        for frame in 0...max(0, lastFrame) where frames[frame] != nil || found[frame] != nil {
            accuracy.add(found: found[frame] ?? [], truth: frames[frame] ?? [])
        }
        return accuracy
    }
}
