import FrameKit
import FrameTestSupport
import Testing

@testable import FrameProcessors

/// The scene's patches that tell a moving camera from moving faces, frame by frame.
@Suite("CameraMotion: whether the camera moves, from the scene behind the faces")
struct CameraMotionTests {
    /// The coffee photo in gray, drawn 120 px wider than a 640x360 frame.
    let scene: PixelBuffer

    init() throws {
        var wide = try PixelBuffer(width: 760, height: 360, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &wide)
        scene = try PixelFormatConversion.convert(wide, to: .gray8)
    }

    /// The 640x360 frame the camera sees at offset `x`; `carried`: the part of it in `block`
    /// drawn from `carried` px further right (an object moving over that part only).
    func frame(_ x: Int, carried: Int = 0, block: Rect = Rect(x: 0, y: 0, width: 0, height: 0)) throws -> PixelBuffer {
        var frame = try scene.cropped(to: Rect(x: x, y: 0, width: 640, height: 360)).copy()
        guard carried != 0 else { return frame }
        let source = try scene.cropped(to: Rect(x: x + block.x + carried, y: block.y, width: block.width, height: block.height)).copy()
        source.withUnsafeBytes(ofPlane: 0) { s, sp in
            frame.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
                for row in 0..<block.height {
                    for column in 0..<block.width {
                        d[(block.y + row) * dp.bytesPerRow + block.x + column] = s[row * sp.bytesPerRow + column]
                    }
                }
            }
        }
        return frame
    }

    @Test("a still camera: anchors placed clear of the faces; no judgement before a whole window, then still")
    func still() throws {
        var camera = CameraMotion()
        let face = Box(x: 200, y: 100, width: 100, height: 100)
        camera.place(in: try frame(0), avoiding: [face], patchSize: 24)
        #expect(camera.anchors.count >= TrackerPolicy.standard.minimumAnchors)
        #expect(camera.anchors.allSatisfy { !$0.box.overlaps(Box(x: 150, y: 50, width: 200, height: 200)) })
        #expect(camera.isStill == nil, "placed first: the faces judge until the anchors have a window")
        for _ in 0..<TrackerPolicy.standard.stillWindow { camera.step(in: try frame(0), minCorrelation: 0.7) }
        #expect(camera.isStill == true && !camera.moveTogether)
    }

    @Test("a pan of two pixels a frame: moving once a window has passed, every anchor together; placing again keeps the judgement")
    func pan() throws {
        var camera = CameraMotion()
        camera.place(in: try frame(0), avoiding: [], patchSize: 24)
        for n in 1...TrackerPolicy.standard.stillWindow { camera.step(in: try frame(2 * n), minCorrelation: 0.7) }
        #expect(camera.isStill == false && camera.moveTogether)
        camera.place(in: try frame(2 * TrackerPolicy.standard.stillWindow), avoiding: [], patchSize: 24)
        #expect(camera.isStill == false, "new anchors inherit the old ones' judgement until they have a window")
    }

    @Test("an object carrying one part of the scene along: the anchors disagree (not a pan)")
    func carried() throws {
        var camera = CameraMotion()
        camera.place(in: try frame(0), avoiding: [], patchSize: 24)
        // The block around one anchor, 20 px wider each way, moves 2 px a frame.
        let a = camera.anchors[0].box.rect
        let block = Rect(x: max(0, a.x - 20), y: max(0, a.y - 20), width: a.width + 40, height: a.height + 40).clamped(
            width: 640, height: 360)
        for n in 1...TrackerPolicy.standard.stillWindow {
            camera.step(in: try frame(0, carried: -2 * n, block: block), minCorrelation: 0.7)
        }
        let carriedAnchor = camera.anchors[0]
        #expect(!carriedAnchor.isFound || abs(carriedAnchor.box.x - carriedAnchor.detectedBox.x) >= 4, "the carried anchor moved")
        #expect(!camera.moveTogether)
        #expect(camera.isStill == true, "the other anchors stayed")
    }

    @Test(
        "a pan faster than the anchors' search: most lost is moving, and a set placed then inherits it; anchors that all moved say so before a whole window"
    )
    func fastPan() throws {
        var camera = CameraMotion()
        camera.place(in: try frame(0), avoiding: [], patchSize: 24)
        for _ in 0..<TrackerPolicy.standard.stillWindow { camera.step(in: try frame(0), minCorrelation: 0.7) }
        #expect(camera.isStill == true)
        camera.place(in: try frame(0), avoiding: [], patchSize: 24) // a whole-frame pass: still, inherited
        camera.step(in: try frame(40), minCorrelation: 0.7) // 40 px in one frame: beyond an 11 px search
        #expect(camera.mostLost && camera.isStill == false, "\(camera.anchors.filter(\.isFound).count) of \(camera.anchors.count) found")
        camera.place(in: try frame(40), avoiding: [], patchSize: 24)
        #expect(camera.isStill == false, "placed again after most were lost: moving until a window says otherwise")

        var fresh = CameraMotion()
        fresh.place(in: try frame(0), avoiding: [], patchSize: 24)
        for n in 1...2 { fresh.step(in: try frame(3 * n), minCorrelation: 0.7) }
        #expect(!fresh.judged && fresh.moveTogether && fresh.isStill == false, "6 px in two frames")
    }

    @Test("a blank wall: no anchor, no judgement (the faces judge)")
    func blank() throws {
        var camera = CameraMotion()
        camera.place(in: try PixelBuffer(width: 640, height: 360, format: .gray8), avoiding: [], patchSize: 24)
        #expect(camera.anchors.isEmpty && camera.isStill == nil && !camera.canJudge)
    }
}
