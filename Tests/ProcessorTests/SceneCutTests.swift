import Foundation
import FrameKit
import FrameTestSupport
import Testing

@testable import FrameProcessors

/// `SceneCut`: another scene told from the image itself, and the tracker starting over on it.
@Suite("Cuts seen in the image")
struct SceneCutTests {
    /// The coffee photo at 1280x720, moved `dx` pixels and its exposure scaled by `gain`.
    static func coffee(dx: Int = 0, gain: Double = 1) throws -> PixelBuffer {
        var wide = try PixelBuffer(width: 1400, height: 720, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &wide)
        var frame = try wide.cropped(to: Rect(x: dx, y: 0, width: 1280, height: 720)).copy()
        frame.withUnsafeMutableBytes(ofPlane: 0) { d, _ in
            for i in d.indices { d[i] = UInt8(min(255, (Double(d[i]) * gain).rounded())) }
        }
        return try PixelFormatConversion.convert(frame, to: .gray8)
    }

    @Test("a pan, a change of exposure or a small face coming in is the same scene; another photo, or no light to a photo, is a cut")
    func cuts() throws {
        var scene = SceneCut()
        func cut(_ frame: PixelBuffer) -> Bool { scene.isCut(frame) }
        #expect(!cut(try Self.coffee())) // the first frame
        #expect(!cut(try Self.coffee(dx: 8))) // a fast pan: 8 px a frame
        #expect(!cut(try Self.coffee(dx: 16, gain: 0.7))) // and the exposure falling 30%
        // Another framing of the photo (a jump in zoom) three frames in: under the threshold,
        // and before a whole window of the scene the still-scene rule does not judge.
        let (withFace, empty, _) = try smallFaceScene()
        #expect(!cut(try PixelFormatConversion.convert(empty, to: .gray8)))
        // A face appearing in that scene once it has held still a whole window (when the
        // still-scene rule judges): the same scene.
        let still = try PixelFormatConversion.convert(empty, to: .gray8)
        var heldStill = 0
        for _ in 0...TrackerPolicy.standard.cutWindow where !cut(still) { heldStill += 1 }
        #expect(heldStill == TrackerPolicy.standard.cutWindow + 1)
        #expect(!cut(try PixelFormatConversion.convert(withFace, to: .gray8))) // a face appears
        #expect(cut(try PixelFormatConversion.convert(try grayWall(), to: .gray8))) // another scene
        #expect(!cut(try PixelFormatConversion.convert(try grayWall(), to: .gray8)))
        var black = try PixelBuffer(width: 1280, height: 720, format: .gray8)
        black.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 0) }
        #expect(cut(black))
        #expect(cut(try Self.coffee())) // out of a frame with no light
    }

    /// A 1280x720 frame whose left half has luma 100 and right half `right`.
    static func halves(_ right: UInt8) throws -> PixelBuffer {
        var frame = try PixelBuffer(width: 1280, height: 720, format: .gray8)
        frame.withUnsafeMutableBytes(ofPlane: 0) { d, plane in
            for y in 0..<720 {
                for x in 0..<1280 { d[y * plane.bytesPerRow + x] = x < 640 ? 100 : right }
            }
        }
        return frame
    }

    @Test(
        "a still scene that changes at once by several times what it moved is another scene though the change is under the threshold (two photos on one background); the same change in a scene on the move is not, nor with the rule off"
    )
    func cutAfterAStillScene() throws {
        let (a, b) = (try Self.halves(100), try Self.halves(120))
        let jump = SceneCut.distance(try #require(SceneCut.grid(a)), try #require(SceneCut.grid(b)))
        try #require(jump > TrackerPolicy.standard.cutFloor && jump < TrackerPolicy.standard.cutThreshold, "\(jump)")
        var still = SceneCut()
        var off = TrackerPolicy.standard
        off.cutJump = .infinity
        var ruleOff = SceneCut(policy: off)
        // A whole window of still frames first (the rule judges none before).
        for _ in 0...TrackerPolicy.standard.cutWindow {
            let (cut, cutWithRuleOff) = (still.isCut(a), ruleOff.isCut(a))
            #expect(!cut && !cutWithRuleOff)
        }
        let (cut, cutWithRuleOff) = (still.isCut(b), ruleOff.isCut(b))
        #expect(cut)
        #expect(!cutWithRuleOff)
        // A scene moving by about half that each frame: the same size of change is its own motion.
        var moving = SceneCut()
        var cuts = 0
        for i in 0..<12 where moving.isCut(try Self.halves(i.isMultiple(of: 2) ? 100 : 110)) { cuts += 1 }
        let jumped = moving.isCut(try Self.halves(130))
        #expect(cuts == 0 && !jumped)
    }

    @Test("inline, passes 30 frames apart: the faces of a new scene come on the cut frame, not at the next pass")
    func passOnTheCut() throws {
        for cutsFromImage in [true, false] {
            var options = FaceTracker.Options(schedule: .inline(interval: 30))
            options.cutsFromImage = cutsFromImage
            let tracker = try FaceTracker(detector: try FaceDetector(), options: options)
            for _ in 0..<5 { #expect(try tracker.faces(in: try grayWall()).isEmpty) }
            let (scene, truth) = try threeFaceScene()
            let found = try tracker.faces(in: scene)
            let matched = truth.filter { t in found.contains { $0.bounds.iou(t) > 0.4 } }
            if cutsFromImage {
                #expect(matched.count == 3, "\(found.map(\.bounds))")
            } else {
                #expect(found.isEmpty, "without cuts from the image the next pass is at frame 31: \(found.map(\.bounds))")
            }
        }
    }
}
