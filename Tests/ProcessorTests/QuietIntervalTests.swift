import FrameKit
import FrameProcessors
import Testing

/// The frames on which `detector` ran a pass (1-based), frame by frame through `frames`, and
/// the faces reported on each.
private func passFrames(
    _ tracker: FaceTracker, _ detector: CountingDetector, _ frames: [PixelBuffer]
) throws -> (passes: [Int], faces: [[Face]]) {
    var passes: [Int] = []
    var faces: [[Face]] = []
    for (i, frame) in frames.enumerated() {
        let before = detector.calls
        faces.append(try tracker.faces(in: frame))
        if detector.calls > before { passes.append(i + 1) }
    }
    return (passes, faces)
}

@Suite("FaceTracker: passes stretched while they change nothing (Options.quietInterval)")
struct QuietIntervalTests {
    @Test("a still face: whole-frame passes on frames 1, 5, 13, 29 (the interval doubling to 16), the face reported on every frame")
    func stillSceneStretches() throws {
        let video = try astronautVideo(Array(repeating: (200, 80), count: 40))
        func run(quiet: Int) throws -> (passes: [Int], faces: [[Face]]) {
            let detector = CountingDetector(try FaceDetector())
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.quietInterval = quiet
            return try passFrames(try FaceTracker(detector: detector, options: options), detector, video.frames)
        }
        let quiet = try run(quiet: 16)
        #expect(quiet.passes == [1, 5, 13, 29], "\(quiet.passes)")
        for (faces, truth) in zip(quiet.faces, video.faces) {
            #expect(faces.count == 1 && faces[0].bounds.iou(truth!) > 0.5, "\(faces.map(\.bounds))")
        }
        // Not stretched: every fourth frame.
        #expect(try run(quiet: 4).passes == Array(stride(from: 1, through: 40, by: 4)))
    }

    @Test(
        "a face appearing at once in a scene that held still is a cut (TrackerPolicy.cutJump): a pass on that frame, and passes back to every fourth frame; a face that jumps calls for one at once"
    )
    func changeBringsPassesBack() throws {
        // Frames 1–20 empty, the face still on 21–44, then moved far on 45–48.
        let positions: [(Int, Int)?] =
            Array(repeating: nil, count: 20) + Array(repeating: (200, 80), count: 24) + Array(repeating: (400, 120), count: 4)
        let video = try astronautVideo(positions)
        let detector = CountingDetector(try FaceDetector())
        var options = FaceTracker.Options(schedule: .inline(interval: 4))
        options.quietInterval = 16
        let run = try passFrames(try FaceTracker(detector: detector, options: options), detector, video.frames)
        // 1, 5, 13 find nothing (4 → 8 → 16); 21: the face came into the still scene at once, a
        // cut, its pass finds it (back to 4); 25 confirms it (8); 33 confirms it; 45: the face
        // jumped, lost, a pass at once. (Without the still-scene cut the face waited for frame
        // 29's pass: the price of a quiet scene.)
        #expect(run.passes == [1, 5, 13, 21, 25, 33, 45], "\(run.passes)")
        #expect(run.faces[0..<20].allSatisfy { $0.isEmpty })
        for i in 20..<48 {
            #expect(
                run.faces[i].count == 1 && run.faces[i][0].bounds.iou(video.faces[i]!) > 0.5,
                "frame \(i + 1): \(run.faces[i].map(\.bounds))")
        }
    }

    @Test(
        "the camera, not the faces, decides: a face moving over a still scene stretches passes; a face the camera follows (still in the frame, the scene panning behind it) keeps them every fourth frame; on a blank wall the faces decide"
    )
    func stillCameraNotStillFaces() throws {
        func passes(_ video: (frames: [PixelBuffer], faces: [Rect?])) throws -> [Int] {
            let detector = CountingDetector(try FaceDetector())
            var options = FaceTracker.Options(schedule: .inline(interval: 4))
            options.quietInterval = 16
            let run = try passFrames(try FaceTracker(detector: detector, options: options), detector, video.frames)
            for (i, (faces, truth)) in zip(run.faces, video.faces).enumerated() {
                #expect(faces.count == 1 && faces[0].bounds.iou(truth!) > 0.5, "frame \(i + 1): \(faces.map(\.bounds))")
            }
            return run.passes
        }
        let walking = (0..<40).map { (100 + 3 * $0, 80) }
        let everyFourth = Array(stride(from: 1, through: 40, by: 4))
        let moving = try passes(try astronautVideo(walking))
        #expect(moving == [1, 5, 13, 29], "a face walking in front of a still camera: \(moving)")
        let followed = try passes(try astronautVideo(Array(repeating: (200, 80), count: 40), pan: (0..<40).map { 3 * $0 }))
        #expect(followed == everyFourth, "a face the panning camera follows: \(followed)")
        let blank = try passes(try astronautVideo(walking, plain: true))
        #expect(blank == everyFourth, "a face walking across a blank wall (the faces decide): \(blank)")
    }

    @Test("tiles' turns stretch only while the camera and the faces look still: a moving face keeps them every eighth frame")
    func tilesStretchOnlyWhenStill() throws {
        func tilePasses(_ positions: [(Int, Int)?]) throws -> Int {
            let video = try astronautVideo(positions)
            let detector = RegionRecorder(try FaceDetector(), scale: 0.5) // tiles over 640x360
            let tracker = try FaceTracker(detector: detector, options: .init(schedule: .inline(interval: 4)))
            for frame in video.frames { #expect(try tracker.faces(in: frame).count == 1) }
            let tiles = TilePlan(width: 640, height: 360, scale: 0.5).tiles
            // After the first frame's sweep; a tile's closer looks (squares around its weak
            // boxes) are not tile passes.
            let passes = detector.regions.filter { $0 == nil || tiles.contains($0!) }
            return passes.dropFirst(1 + tiles.count).filter { $0 != nil }.count
        }
        let still = try tilePasses(Array(repeating: (200, 80), count: 40))
        let moving = try tilePasses((0..<40).map { (60 + 6 * $0, 80) })
        // Still: the interval reaches 8 by frame 5, so one tile on frame 17, then none before 41.
        // Moving: whole-frame passes stretch (a still camera) but tiles keep their turn.
        #expect(still <= 2 && moving >= 3, "tile passes after the first frame: still \(still), moving \(moving)")
    }

    @Test(
        "the background schedule: passes back to back while they change something, then from frame to frame further apart (1, 2, 4, 8, 16, 28, 40 of 40 still frames); none counted as a frame without its pass"
    )
    func backgroundStretches() throws {
        let video = try astronautVideo(Array(repeating: (200, 80), count: 40))
        let face = Face(bounds: video.faces[0]!, confidence: 0.9)
        func run(quiet: Int) throws -> (statistics: PassStatistics, counts: [Int]) {
            var options = FaceTracker.Options(schedule: .background)
            options.quietInterval = quiet
            let tracker = try FaceTracker(detector: ScriptedDetector([DetectionPass(faces: [face])]), options: options)
            var counts: [Int] = []
            for frame in video.frames {
                counts.append(try tracker.faces(in: frame).count)
                tracker.waitUntilIdle() // each pass's result joins on the next frame
            }
            return (tracker.statistics, counts)
        }
        let quiet = try run(quiet: 12)
        #expect(quiet.statistics.passes == 6 && quiet.statistics.framesWithoutPass == 0, "\(quiet.statistics)")
        #expect(quiet.counts == [0] + Array(repeating: 1, count: 39), "\(quiet.counts)")
        // 1: back to back, a pass on every frame (the last one's result never joins).
        let busy = try run(quiet: 1)
        #expect(busy.statistics.passes == 39, "\(busy.statistics)")
    }

    @Test(
        "the background schedule under a moving camera: passes stay back to back however quiet; a face moving in front of a still one lets them stretch"
    )
    func backgroundMovingStaysBackToBack() throws {
        func passes(_ video: (frames: [PixelBuffer], faces: [Rect?])) throws -> Int {
            let tracker = try FaceTracker(detector: try FaceDetector(), options: .init(schedule: .background))
            for frame in video.frames {
                _ = try tracker.faces(in: frame)
                tracker.waitUntilIdle()
            }
            return tracker.statistics.passes
        }
        let panning = try passes(try astronautVideo((0..<30).map { (60 + 8 * $0, 80) }, pan: (0..<30).map { 4 * $0 }))
        #expect(panning == 29, "panning: \(panning)")
        let stillCamera = try passes(try astronautVideo((0..<30).map { (60 + 8 * $0, 80) }))
        #expect(stillCamera <= 8, "a still camera: \(stillCamera)")
    }
}
