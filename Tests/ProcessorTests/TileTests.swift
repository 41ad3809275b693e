import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

@Suite("FaceTracker: tiles for small faces, their sweeps and closer looks")
struct TileTests {
    @Test(
        "a face too small for the whole-frame pass (~26 px in 1280x720, 13 px at the network) is found by the tiles on the first frame and kept; with tiles off, never"
    )
    func tilesFindSmallFaces() throws {
        let (frame, _, truth) = try smallFaceScene()
        let detector = try FaceDetector()
        #expect(try detector.detect(in: frame).isEmpty, "the whole-frame pass does not see it (else this test proves nothing)")
        func run(tiles: Bool) throws -> [[Face]] {
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.tiles = tiles
            let tracker = try FaceTracker(detector: detector, options: options)
            return try (0..<24).map { _ in try tracker.faces(in: frame) }
        }
        let tiled = try run(tiles: true)
        #expect(tiled.allSatisfy { $0.count == 1 && $0[0].bounds.iou(truth) > 0.4 }, "\(tiled.map { $0.map(\.bounds) })")
        #expect(try run(tiles: false).allSatisfy(\.isEmpty))
    }

    @Test(
        "a tile's weak box too small for its scale gets a closer look, its surroundings enlarged: a face found there is reported; without closer looks, not"
    )
    func closerLook() throws {
        let (_, frame, _) = try smallFaceScene()
        func run(
            closer: Bool, small: Rect = Rect(x: 600, y: 300, width: 18, height: 22),
            found: Rect = Rect(x: 601, y: 301, width: 17, height: 21)
        ) throws -> (faces: [Face], looked: [Rect]) {
            let looked = Mutex<[Rect]>([])
            // The tile holding the box sees it weakly (0.12); a 64 px square around it,
            // enlarged, sees a face; the whole frame nothing.
            let detector = TiledScriptDetector(scale: 0.5) { region, _ in
                guard let region else { return DetectionPass(faces: []) }
                if region.width == 64 && region.height == 64 {
                    looked.withLock { $0.append(region) }
                    return DetectionPass(faces: [Face(bounds: found, confidence: 0.8)])
                }
                guard TilePlan.holds(region, Box(small)) else { return DetectionPass(faces: []) }
                return DetectionPass(faces: [], candidates: [Face(bounds: small, confidence: 0.12)])
            }
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.closerLooks = closer
            let tracker = try FaceTracker(detector: detector, options: options)
            return (try tracker.faces(in: frame), looked.withLock { $0 })
        }
        let small = Rect(x: 600, y: 300, width: 18, height: 22)
        let closer = try run(closer: true)
        #expect(closer.faces.count == 1 && closer.faces.first.map { $0.bounds.iou(small) > 0.6 } == true, "\(closer.faces)")
        #expect(!closer.looked.isEmpty && closer.looked.allSatisfy { TilePlan.holds($0, Box(small)) }, "\(closer.looked)")
        let plain = try run(closer: false)
        #expect(plain.faces.isEmpty && plain.looked.isEmpty)
        // A face the closer look finds touching the frame's edge is not taken.
        let atEdge = try run(
            closer: true, small: Rect(x: 600, y: 698, width: 18, height: 22), found: Rect(x: 601, y: 699, width: 17, height: 21))
        #expect(atEdge.faces.isEmpty && !atEdge.looked.isEmpty, "\(atEdge.faces)")
    }

    @Test(
        "on the background schedule a whole-frame pass's weak small box gets a closer look too: a confident face found there is reported before any tile's pass has ended; a weak one (0.4) waits for the tile's own closer look"
    )
    func wholeFrameCloserLook() throws {
        let (_, frame, _) = try smallFaceScene()
        let small = Rect(x: 600, y: 300, width: 18, height: 22)
        func run(closerConfidence: Double) throws -> (beforeTiles: [Face], afterTiles: [Face]) {
            // Tiles' passes are held until the test lets them go: the faces reported meanwhile
            // come from whole-frame passes and their closer looks only.
            let gate = DispatchSemaphore(value: 0)
            let tilesHeld = Mutex(true)
            let detector = TiledScriptDetector(scale: 0.5) { region, _ in
                guard let region else { return DetectionPass(faces: [], candidates: [Face(bounds: small, confidence: 0.15)]) }
                if region.width == 64 && region.height == 64 {
                    let found = Rect(x: small.x + 1, y: small.y + 1, width: 17, height: 21)
                    return DetectionPass(faces: [Face(bounds: found, confidence: closerConfidence)])
                }
                if tilesHeld.withLock({ $0 }) { gate.wait() }
                guard TilePlan.holds(region, Box(small)) else { return DetectionPass(faces: []) }
                return DetectionPass(faces: [], candidates: [Face(bounds: small, confidence: 0.12)])
            }
            let tracker = try FaceTracker(detector: detector, options: .init(schedule: .background))
            // The first whole-frame pass (and its closer looks) ends; the next frame takes its
            // faces and hands the tiles' sweep to the worker, where it is held.
            _ = try tracker.faces(in: frame)
            tracker.waitUntilIdle()
            let before = try tracker.faces(in: frame)
            tilesHeld.withLock { $0 = false }
            gate.signal()
            tracker.waitUntilIdle()
            var after = before
            for _ in 0..<20 where after.isEmpty {
                after = try tracker.faces(in: frame)
                tracker.waitUntilIdle()
            }
            return (before, after)
        }
        let confident = try run(closerConfidence: 0.8)
        #expect(confident.beforeTiles.count == 1 && confident.beforeTiles.first.map { $0.bounds.iou(small) > 0.6 } == true)
        let weak = try run(closerConfidence: 0.4)
        #expect(weak.beforeTiles.isEmpty, "a whole-frame pass's closer look takes only a confident face: \(weak.beforeTiles)")
        #expect(weak.afterTiles.count == 1, "the tile's closer look takes it")
    }

    @Test(
        "on the background schedule the tiles' first sweep is one job: after the first whole-frame pass, every tile back to back, and the small face a whole-frame pass cannot see is reported; without it the tiles take turns with whole-frame passes"
    )
    func sweepAtOnce() throws {
        let (frame, _, truth) = try smallFaceScene()
        let tiles = TilePlan(width: frame.width, height: frame.height, scale: try FaceDetector().passScale(width: 1280, height: 720)).tiles
        #expect(tiles.count == 6)
        func run(atOnce: Bool) throws -> (found: [Face], regions: [Rect?]) {
            var options = FaceTracker.Options(schedule: .background)
            options.sweepAtOnce = atOnce
            let detector = RegionRecorder(try FaceDetector())
            let tracker = try FaceTracker(detector: detector, options: options)
            // Each pass ends before the next frame (an idle machine, a fast network). A still
            // frame: passes stretch (quietInterval), the tiles' turns with them.
            var found: [Face] = []
            for _ in 0..<400 where found.isEmpty {
                found = try tracker.faces(in: frame)
                tracker.waitUntilIdle()
            }
            // Whole-frame and tile passes (not a tile's closer looks, squares around its weak boxes).
            return (found, detector.regions.filter { $0 == nil || tiles.contains($0!) })
        }
        let atOnce = try run(atOnce: true)
        #expect(atOnce.found.count == 1 && atOnce.found.first.map { $0.bounds.iou(truth) > 0.4 } == true, "\(atOnce.found.map(\.bounds))")
        #expect(atOnce.regions.first == .some(nil), "the whole frame first")
        #expect(Array(atOnce.regions.dropFirst().prefix(6)) == tiles.map { Optional($0) }, "then every tile in turn: \(atOnce.regions)")
        // Without it the same face waits for its tile, which takes turns with whole-frame passes.
        let inTurn = try run(atOnce: false)
        #expect(inTurn.found.count == 1, "\(inTurn.regions)")
        #expect(backToBackSweeps(inTurn.regions, tiles: 6) == 0 && inTurn.regions.count > 7, "\(inTurn.regions)")
    }

    @Test(
        "a scene of large faces only sweeps its tiles in turn; a cut seen in the image to a scene with none starts the sweep again as a whole-frame pass, then every tile back to back, and so does the next cut; faces lost with cuts from the image off start none",
        arguments: [false, true]
    )
    func cutRestartsSweep(cutsFromImage: Bool) throws {
        let (scene, boxes) = try threeFaceScene()
        let wall = try grayWall()
        let detector = SweepCounter(faces: boxes.map { Face(bounds: $0, confidence: 0.9) })
        var options = FaceTracker.Options.backToBack
        options.cutsFromImage = cutsFromImage
        let tracker = try FaceTracker(detector: detector, options: options)
        func feed(_ frame: PixelBuffer, frames: Int) throws -> [Face] {
            var faces: [Face] = []
            // Each pass ends before the next frame: the frame counts decide, not the clock.
            for _ in 0..<frames {
                faces = try tracker.faces(in: frame)
                tracker.waitUntilIdle()
            }
            return faces
        }
        // The scene for 40 frames: its faces, all large, its tiles in turn (nothing small to see).
        #expect(try feed(scene, frames: 40).count == 3)
        tracker.waitUntilIdle()
        #expect(detector.sweeps == 0 && detector.tilePasses > 0)
        // On until the next pass in turn is a tile's (the last passes whole-frame ones), so
        // that a whole-frame pass at the cut is the cut's own.
        let turn = TrackerPolicy.standard.tileTurnAfterSweep
        func tileIsNext() -> Bool { detector.regions.suffix(turn - 1).allSatisfy { $0 == nil } }
        for _ in 0..<turn where !tileIsNext() { _ = try feed(scene, frames: 1) }
        try #require(tileIsNext())
        let start = detector.regions.count
        // The cut, and 13 frames of the new scene: the sweep again.
        #expect(try feed(wall, frames: 10).isEmpty)
        tracker.waitUntilIdle()
        _ = try feed(wall, frames: 3)
        tracker.waitUntilIdle()
        #expect(detector.sweeps == (cutsFromImage ? 1 : 0), "every tile back to back after the cut")
        // The cut frame's pass is the whole frame, not the tile in turn; then every tile back
        // to back.
        let after = Array(detector.regions[start...])
        try #require(!after.isEmpty)
        if cutsFromImage {
            #expect(after.first == .some(nil) && backToBackSweeps(Array(after.prefix(7)), tiles: 6) == 1, "\(after.prefix(8))")
        } else {
            #expect(after.first != .some(nil), "\(after.prefix(8))")
        }
        // Back to the faces and away again: each scene is new and is swept.
        #expect(try feed(scene, frames: 6).count == 3)
        _ = try feed(wall, frames: 10)
        tracker.waitUntilIdle()
        #expect(detector.sweeps == (cutsFromImage ? 2 : 0), "the next cut's sweep")
    }

    @Test(
        "after prepare(), a cut's sweep starts with its whole-frame pass on the cut frame itself, on the caller's thread, where the worker is free (as on the first frame); the tiles follow on the worker"
    )
    func cutPassOnFrame() throws {
        let (scene, boxes) = try threeFaceScene()
        let wall = try grayWall()
        let counter = SweepCounter(faces: boxes.map { Face(bounds: $0, confidence: 0.9) })
        let detector = ThreadNoting(counter)
        let tracker = try FaceTracker(detector: detector, options: .backToBack)
        defer { tracker.waitUntilIdle() }
        try tracker.prepare(width: 1280, height: 720)
        let caller = pthread_self()
        // The scene for 40 frames, each pass over before the next frame: the worker is free.
        for _ in 0..<40 {
            _ = try tracker.faces(in: scene)
            tracker.waitUntilIdle()
        }
        #expect(try tracker.faces(in: scene).count == 3)
        tracker.waitUntilIdle()
        let (passes, wholeFrame) = (detector.passThreads.count, counter.wholeFramePasses)
        // The cut: its whole-frame pass has run when the frame returns, on this thread.
        #expect(try tracker.faces(in: wall).isEmpty)
        let atCut = Array(detector.passThreads.dropFirst(passes))
        #expect(
            atCut.count == 1 && pthread_equal(atCut[0], caller) != 0 && counter.wholeFramePasses == wholeFrame + 1,
            "\(atCut.count) passes at the cut")
        tracker.waitUntilIdle()
        for _ in 0..<3 {
            _ = try tracker.faces(in: wall)
            tracker.waitUntilIdle()
        }
        #expect(counter.sweeps == 1, "every tile after it, back to back")
        #expect(detector.passThreads.dropFirst(passes + 1).allSatisfy { pthread_equal($0, caller) == 0 }, "the tiles on the worker")
    }

    @Test(
        "a small face lost at a cut calls once for the tile that holds it, not for a whole-frame pass on every later frame (a video archive's cuts cost 4x the passes before)"
    )
    func lostSmallFaceCallsItsTile() throws {
        // The 26 px face of tilesFindSmallFaces for 7 frames (whole-frame passes on 1 and 5),
        // then, on frame 8, a cut to the photo alone.
        let (withFace, cut, face) = try smallFaceScene()
        let detector = RegionRecorder(try FaceDetector())
        var options = FaceTracker.Options(schedule: .inline(interval: 4))
        options.quietInterval = 4 // fixed: the passes counted below are the lost face's
        let tracker = try FaceTracker(detector: detector, options: options)
        for _ in 0..<7 { #expect(try tracker.faces(in: withFace).count == 1) }
        detector.clear()
        #expect(try tracker.faces(in: cut).isEmpty)
        let atCut = detector.regions
        let plan = TilePlan(width: 1280, height: 720, scale: detector.passScale(width: 1280, height: 720))
        #expect(atCut.count == 1 && atCut[0].map { TilePlan.holds($0, Box(face)) && plan.tiles.contains($0) } == true, "\(atCut)")
        detector.clear()
        for _ in 0..<12 { #expect(try tracker.faces(in: cut).isEmpty) }
        // Frames 9…20: whole-frame passes every fourth (9, 13, 17) and a tile in turn on a
        // frame between them every eighth (16); the face's lost track asks for none.
        let wholeFrame = detector.regions.filter { $0 == nil }.count
        #expect(wholeFrame == 3 && detector.regions.count <= 5, "\(detector.regions)")
    }

    @Test("tiles cover the frame, overlap by the small-face size, and shrink half as much as the whole-frame pass")
    func tilePlan() {
        let plan = TilePlan(width: 1280, height: 720, scale: 0.5)
        #expect(plan.smallFace == 64 && plan.tiles.count == 6)
        // Every pixel in some tile, every 64 px box wholly inside one, and every 59 px box seen
        // whole by one (clear of its inner edges: a tile judges only what it sees whole).
        for y in stride(from: 0, to: 720 - 64, by: 3) {
            for x in stride(from: 0, to: 1280 - 64, by: 3) {
                let box = Box(x: Double(x), y: Double(y), width: 64, height: 64)
                #expect(plan.tiles.contains { TilePlan.holds($0, box) }, "\(x),\(y)")
                let smaller = Box(x: Double(x), y: Double(y), width: 59, height: 59)
                #expect(plan.tiles.contains { plan.seesWhole($0, smaller) }, "\(x),\(y)")
            }
        }
        #expect(plan.tiles.allSatisfy { max($0.width, $0.height) <= 640 })
        #expect(TilePlan(width: 640, height: 360, scale: 1).tiles.isEmpty, "no tiles where the pass does not shrink the frame")
        let hd = TilePlan(width: 1920, height: 1080, scale: 1.0 / 3)
        #expect(hd.tiles.allSatisfy { max($0.width, $0.height) <= 960 } && hd.smallFace == 96)
    }
}
