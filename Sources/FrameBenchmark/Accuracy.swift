import FrameCore

/// Found faces against true ones: each found box matched once, greedily by overlap (IoU ≥
/// ``minimumOverlap``, the best pairs first); a face found on an ignored true face counts
/// neither way. framekit bench's `--truth` and framekit-bench's corpus score alike.
public struct Accuracy: Codable, Sendable, Equatable {
    public var truePositives = 0
    public var falsePositives = 0
    public var falseNegatives = 0
    public init(truePositives: Int = 0, falsePositives: Int = 0, falseNegatives: Int = 0) {
        self.truePositives = truePositives
        self.falsePositives = falsePositives
        self.falseNegatives = falseNegatives
    }
    public var recall: Double { truePositives + falseNegatives == 0 ? 1 : Double(truePositives) / Double(truePositives + falseNegatives) }
    public var precision: Double {
        truePositives + falsePositives == 0 ? 1 : Double(truePositives) / Double(truePositives + falsePositives)
    }
    public static let minimumOverlap = 0.4

    public mutating func add(found: [Rect], truth: [TruthFace]) {
        var pairs: [(Int, Int, Double)] = []
        for (fi, f) in found.enumerated() {
            for (ti, t) in truth.enumerated() {
                let o = f.iou(t.box)
                if o >= Self.minimumOverlap { pairs.append((fi, ti, o)) }
            }
        }
        var usedFound = Set<Int>()
        var usedTruth = Set<Int>()
        for (fi, ti, _) in pairs.sorted(by: { $0.2 > $1.2 }) where !usedFound.contains(fi) && !usedTruth.contains(ti) {
            usedFound.insert(fi)
            usedTruth.insert(ti)
            if !truth[ti].ignored { truePositives += 1 }
        }
        falsePositives += found.count - usedFound.count
        falseNegatives += truth.indices.filter { !usedTruth.contains($0) && !truth[$0].ignored }.count
    }

    public static func + (a: Accuracy, b: Accuracy) -> Accuracy {
        Accuracy(
            truePositives: a.truePositives + b.truePositives, falsePositives: a.falsePositives + b.falsePositives,
            falseNegatives: a.falseNegatives + b.falseNegatives)
    }
}
