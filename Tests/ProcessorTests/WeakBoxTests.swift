import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

@Suite("FaceTracker: weak boxes and the CNN pass")
struct WeakBoxTests {
    @Test(
        "an established face the network scores below its threshold stays reported while weaker boxes confirm it (ByteTrack's two thresholds); without them, or not yet established, it is dropped"
    )
    func weakBoxesConfirmAnEstablishedFace() throws {
        let video = try astronautVideo(Array(repeating: (200, 80), count: 24))
        let face = video.faces[0]!
        // Passes on frames 1, 5, 9, … (every fourth): the first three report the face, every
        // later one only a weak box on it, and a weak box where there is no face (which must
        // never be reported).
        let stray = Face(bounds: Rect(x: 20, y: 20, width: 60, height: 70), confidence: 0.2)
        let strong = DetectionPass(faces: [Face(bounds: face, confidence: 0.9)])
        let weak = DetectionPass(faces: [], candidates: [Face(bounds: face, confidence: 0.15), stray])
        func reported(confirmation: Double?, establishedAfter: Int = 3) throws -> [[Face]] {
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.quietInterval = 4 // fixed: the script is per pass
            options.confirmationThreshold = confirmation
            options.establishedAfter = establishedAfter
            let tracker = try FaceTracker(detector: ScriptedDetector([strong, strong, strong, weak]), options: options)
            return try video.frames.map { try tracker.faces(in: $0) }
        }
        let confirmed = try reported(confirmation: 0.1)
        #expect(confirmed.allSatisfy { $0.count == 1 && $0[0].bounds.iou(face) > 0.8 }, "\(confirmed.map { $0.map(\.bounds) })")
        #expect(confirmed[12].first?.confidence == 0.15, "a face confirmed by a weak box carries that box's confidence")
        // Weak boxes under the confirmation threshold, no confirmation, or a face reported by
        // fewer passes than establish it: hidden from the fourth pass on, then dropped.
        let dropped = Array(repeating: 1, count: 12) + Array(repeating: 0, count: 12)
        for run in [try reported(confirmation: 0.18), try reported(confirmation: nil), try reported(confirmation: 0.1, establishedAfter: 4)]
        {
            #expect(run.map(\.count) == dropped, "\(run.map(\.count))")
        }
    }

    @Test(
        "a barely confident box partly on a stronger face of the same pass is that face's second box: it starts no track"
    )
    func secondBoxStartsNoTrack() throws {
        let video = try astronautVideo(Array(repeating: (200, 80), count: 8))
        let face = video.faces[0]!
        // Beside the face, a third of it on the face (suppression at IoU 0.3 leaves it).
        let beside = Face(bounds: Rect(x: face.x - 70, y: face.y, width: 100, height: 115), confidence: 0.35)
        let alone = Face(bounds: Rect(x: 420, y: 200, width: 100, height: 115), confidence: 0.35)
        let pass = DetectionPass(faces: [Face(bounds: face, confidence: 0.9), beside, alone])
        let tracker = try FaceTracker(detector: ScriptedDetector([pass]), options: .init(schedule: .inline(interval: 4)))
        for frame in video.frames {
            let found = try tracker.faces(in: frame).map(\.bounds)
            #expect(found.count == 2 && found.contains { $0.iou(face) > 0.8 } && found.contains { $0.iou(alone.bounds) > 0.8 }, "\(found)")
        }
    }

    @Test(
        "a small face only a whole-frame pass reported (not yet established, no tile saw it) is judged by the next whole-frame pass; one a tile reported waits for a tile"
    )
    func unsureSmallFaceJudgedByWholeFramePasses() throws {
        // 640x360 shrunk by half: faces under 64 px are a tile's to judge. A 40x46 box on the
        // head, reported by the second whole-frame pass (frame 5) only; tiles report nothing,
        // except in the second run, where the tile holding it reports it on frame 1.
        let video = try astronautVideo(Array(repeating: (200, 80), count: 12))
        let small = Face(bounds: Rect(x: 280, y: 150, width: 40, height: 46), confidence: 0.4)
        func counts(tileSeesIt: Bool) throws -> [Int] {
            let detector = TiledScriptDetector(scale: 0.5) { region, before in
                if region == nil { return DetectionPass(faces: before == 1 ? [small] : []) }
                return DetectionPass(faces: tileSeesIt && before == 1 ? [small] : [])
            }
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.confirmationThreshold = nil
            let tracker = try FaceTracker(detector: detector, options: options)
            return try video.frames.map { try tracker.faces(in: $0).count }
        }
        // Whole-frame passes on frames 1, 5, 9; on frame 1 every tile too. Reported from 5;
        // frame 9's whole-frame pass does not report it: hidden, then dropped (before, it lived
        // until its tile came round, on frame 10 or later).
        #expect(try counts(tileSeesIt: false) == [0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0])
        // A face a tile has reported is left to the tiles: a whole-frame pass missing it is no miss.
        let seen = try counts(tileSeesIt: true)
        #expect(seen[0] == 1 && seen[8] == 1, "\(seen) \(TilePlan(width: 640, height: 360, scale: 0.5).tiles)")
    }

    @Test("the CNN's pass: its faces are exactly what detect gives, its candidates the weaker boxes down to the floor")
    func cnnPassSplitsAtTheThreshold() throws {
        let detector = try FaceDetector(options: .init(scoreThreshold: 0.3))
        let video = try astronautVideo([(200, 80)])
        let pass = try detector.pass(in: video.frames[0], candidatesDownTo: 0.02)
        #expect(pass.faces == (try detector.detect(in: video.frames[0])))
        #expect(pass.candidates.allSatisfy { ($0.confidence ?? 1) >= 0.02 && ($0.confidence ?? 1) <= 0.3 })
        // The same boxes as one detect at the floor, in two parts.
        let low = try FaceDetector(options: .init(scoreThreshold: 0.02)).detect(in: video.frames[0])
        #expect(Set(pass.faces + pass.candidates) == Set(low))
        #expect(try detector.pass(in: video.frames[0], candidatesDownTo: 0.5) == DetectionPass(faces: pass.faces))
    }
}
