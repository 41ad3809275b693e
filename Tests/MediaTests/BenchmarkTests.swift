import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// FrameBenchmark's library API: a processor chain benchmarked on files, scored against truth,
/// compared with a baseline.
@Suite("Benchmark: a processor chain on the user's files, against a baseline")
struct BenchmarkTests {
    static func clip(frames: Int) throws -> URL {
        let url = Fixtures.temporaryFolder().appendingPathComponent("faces.mjpeg")
        let photo = try Data(contentsOf: Fixtures.astronaut)
        try Data((0..<frames).flatMap { _ in photo }).write(to: url)
        return url
    }

    @Test("rounds over every input with a fresh chain each run; the tracker's faces scored against the truth")
    func runsAndScores() throws {
        let clip = try Self.clip(frames: 6)
        let truth = FaceTruth(
            frames: Dictionary(uniqueKeysWithValues: (0..<6).map { ($0, [TruthFace(box: Rect(x: 181, y: 58, width: 88, height: 120))]) }))
        let chains = Mutex(0)
        let benchmark = Benchmark(inputs: [.init(file: clip, name: "faces", truth: truth)], rounds: 2) {
            chains.withLock { $0 += 1 }
            return ProcessorChain([FaceTrackingProcessor(tracker: try FaceTracker(detector: try FaceDetector()))])
        }
        let results = try benchmark.run()
        #expect(results.count == 1 && results[0].name == "faces")
        #expect(results[0].rounds.count == 2 && results[0].rounds.allSatisfy { $0.framesDelivered == 6 && $0.referenceRate > 0 })
        #expect(results[0].relativeSpeed > 0)
        #expect(results[0].accuracy?.recall == 1 && results[0].accuracy?.precision == 1)
        // Two timed runs and one scoring run, each with its own chain.
        #expect(chains.withLock { $0 } == 3)
        // A baseline written and read back compares with these results as no regression.
        let path = Fixtures.temporaryFolder().appendingPathComponent("baseline.json").path
        let saved = BenchmarkBaseline(results: results, cpus: 2)
        try Data(saved.text.utf8).write(to: URL(fileURLWithPath: path))
        let comparison = try BenchmarkBaseline.read(path).compare(results, tolerance: 1.25, cpus: 2)
        #expect(!comparison.regressed && comparison.verdicts.count == 1 && abs(comparison.verdicts[0].slowdown - 1) < 1e-6)
    }

    @Test("a comparison fails beyond both the tolerance and the noise, and on recall fallen past the allowed drop")
    func compares() throws {
        func result(speed: Double, speeds: [Double]? = nil, recall: Int? = nil) -> BenchmarkResult {
            // Relative speed = frames delivered over wall seconds over the reference rate.
            let rounds = (speeds ?? [speed]).map {
                BenchmarkRound(framesCaptured: 100, framesDelivered: 100, wallSeconds: 1, cpuSeconds: 1, referenceRate: 100 / $0)
            }
            return BenchmarkResult(
                name: "clip", rounds: rounds,
                accuracy: recall.map { Accuracy(truePositives: $0, falsePositives: 0, falseNegatives: 100 - $0) })
        }
        let baseline = BenchmarkBaseline(results: [result(speed: 1, recall: 100)], cpus: 1)
        #expect(!baseline.compare([result(speed: 0.9, recall: 100)], tolerance: 1.25, cpus: 1).regressed)
        let slower = baseline.compare([result(speed: 0.5, recall: 100)], tolerance: 1.25, cpus: 1)
        #expect(slower.regressed && slower.verdicts[0].tooSlow && !slower.verdicts[0].qualityDropped)
        #expect(slower.lines.last?.hasSuffix("REGRESSION (SLOWER)") == true, "\(slower.lines)")
        // The same slowdown inside the rounds' own spread (0.25...1.0: 150% noise) is not evidence.
        #expect(!baseline.compare([result(speed: 0.5, speeds: [0.25, 0.5, 1.0], recall: 100)], tolerance: 1.25, cpus: 1).regressed)
        // Recall 0.95 against 1.0: past the default 0.02, within 0.05.
        let fewer = baseline.compare([result(speed: 1, recall: 95)], tolerance: 1.25, cpus: 1)
        #expect(fewer.regressed && fewer.verdicts[0].qualityDropped)
        #expect(!baseline.compare([result(speed: 1, recall: 95)], tolerance: 1.25, maxQualityDrop: 0.05, cpus: 1).regressed)
        // Another CPU count is said; an input missing on either side is a note, not a failure.
        let other = baseline.compare([BenchmarkResult(name: "new", rounds: result(speed: 1).rounds)], tolerance: 1.25, cpus: 4)
        #expect(!other.regressed && other.notes.count == 3, "\(other.notes)")
    }

    @Test("an input that cannot be read is an error naming it; a truth or baseline file that is not one names the file")
    func errors() throws {
        let missing = Benchmark(inputs: [.init(file: URL(fileURLWithPath: "/nonexistent/clip.mp4"), name: "clip")]) { ProcessorChain() }
        #expect {
            try missing.run()
        } throws: { error in
            guard case .runFailed(let input, _)? = error as? BenchmarkError else { return false }
            return input == "clip"
        }
        let folder = Fixtures.temporaryFolder()
        let junk = folder.appendingPathComponent("junk.json")
        try Data("{\"frame\": 0, \"faces\": [[1, 2, 3]]}\n".utf8).write(to: junk)
        #expect(throws: BenchmarkError.self) { try FaceTruth.read(junk.path) }
        #expect(throws: BenchmarkError.self) { try BenchmarkBaseline.read(junk.path) }
    }
}
