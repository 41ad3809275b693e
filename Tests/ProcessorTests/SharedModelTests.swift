import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

/// One model per process (#51): every `FaceDetector` of a file shares its weights and networks.
@Suite("FaceDetector: one model per process, networks lent per call")
struct SharedModelTests {
    /// A copy of the model of this test's own: the default file's model is shared by every test
    /// running in parallel, whose networks would count in this test's figures.
    static func privateModel(_ label: String) throws -> URL {
        let directory = Fixtures.temporaryFolder("shared-model-\(label)")
        let copy = directory.appendingPathComponent("centerface.onnx")
        try FileManager.default.copyItem(at: try FaceDetector().modelURL, to: copy)
        return copy
    }

    @Test("two trackers share one model: the second sets up no network of its own, and finds the same faces")
    func twoTrackersShareTheModel() throws {
        let video = try astronautVideo((0..<6).map { (100 + $0 * 16, 90) })
        let file = try Self.privateModel("trackers")
        let first = try FaceDetector(modelURL: file)
        let second = try FaceDetector(modelURL: file, options: .init(scoreThreshold: 0.3))
        #expect(first.model === second.model)
        let model = first.model
        let one = try FaceTracker(detector: first, options: .init(schedule: .inline(interval: 2)))
        let a = try video.frames.map { try one.faces(in: $0) }
        let made = model.networkCounts.made
        #expect(made >= 1)
        let two = try FaceTracker(detector: second, options: .init(schedule: .inline(interval: 2)))
        let b = try video.frames.map { try two.faces(in: $0) }
        #expect(model.networkCounts.made == made, "the second tracker's passes ran on the first's networks")
        #expect(a == b)
        #expect(!a.joined().isEmpty)
    }

    @Test("another file is another model; a model goes when its last detector does")
    func modelsByFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("shared-model-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("centerface.onnx")
        try FileManager.default.copyItem(at: try FaceDetector().modelURL, to: copy)
        let standard = try FaceDetector()
        let other = try FaceDetector(modelURL: copy)
        #expect(standard.model !== other.model)
        #expect(try FaceDetector(modelURL: copy).model === other.model)
        let lonely = directory.appendingPathComponent("lonely.onnx")
        try FileManager.default.copyItem(at: copy, to: lonely)
        weak var gone: CenterFaceModel?
        do {
            let only = try FaceDetector(modelURL: lonely)
            gone = only.model
            #expect(gone != nil)
        }
        #expect(gone == nil, "the last detector of a file gone, its model is freed")
    }

    @Test("calls from many threads at once hold no more networks than calls may run at once")
    func parallelCallsAreBounded() throws {
        let video = try astronautVideo([(120, 80)])
        let frame = video.frames[0]
        let file = try Self.privateModel("parallel")
        let detectors = try (0..<8).map { _ in try FaceDetector(modelURL: file) }
        let model = detectors[0].model
        let before = model.networkCounts.made
        let faces = Mutex<[[Face]]>([])
        DispatchQueue.concurrentPerform(iterations: detectors.count) { i in
            let found = (try? detectors[i].detect(in: frame)) ?? []
            faces.withLock { $0.append(found) }
        }
        let all = faces.withLock { $0 }
        #expect(all.count == 8 && all.allSatisfy { $0 == all[0] } && !all[0].isEmpty)
        #expect(model.networkCounts.made - before <= model.concurrentCalls, "networks set up: \(model.networkCounts.made - before)")
        #expect(model.networkCounts.idle <= CenterFaceModel.networksKept)
    }
}
