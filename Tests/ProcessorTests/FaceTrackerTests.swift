import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

@Suite("FaceTracker: passes and correlation tracking on video")
struct FaceTrackerTests {
    @Test("a moving face is reported in every frame, where it is, with passes only every third frame")
    func followsAMovingFace() throws {
        let video = try astronautVideo((0..<24).map { (60 + $0 * 12, 80 + $0 * 3) })
        let detector = CountingDetector(try FaceDetector())
        var options = FaceTracker.Options(schedule: .inline(interval: 3))
        options.quietInterval = 3 // fixed (QuietIntervalTests has the stretched interval)
        let tracker = try FaceTracker(detector: detector, options: options)
        for (frame, truth) in zip(video.frames, video.faces) {
            let faces = try tracker.faces(in: frame)
            #expect(faces.count == 1)
            if let face = faces.first, let truth { #expect(face.bounds.iou(truth) > 0.5, "\(face.bounds) vs \(truth)") }
            #expect(faces.first?.landmarks.count == 5 && faces.first?.confidence != nil)
        }
        #expect(detector.calls == 8, "passes: \(detector.calls)")
    }

    @Test("the inline schedule gives the same faces on every run")
    func deterministic() throws {
        let video = try astronautVideo((0..<12).map { (100 + $0 * 20, 100) })
        func run() throws -> [[Face]] {
            let tracker = try FaceTracker(detector: try FaceDetector())
            return try video.frames.map { try tracker.faces(in: $0) }
        }
        #expect(try run() == run())
    }

    @Test(
        "frames of another size (a folder of photos) start the tracker over: a pass on the first of each size, boxes of the new size, nothing carried from the old"
    )
    func frameSizeChange() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut) // 512x512, the face ~88 px wide
        // The same photo at 0.9x and at 301x333: the face near where it was, smaller, which a
        // track carried across the change (its patch matching) kept at the old size.
        var smaller = try PixelBuffer(width: 460, height: 460, format: .rgb24)
        try Resize.bilinear(photo, into: &smaller)
        var odd = try PixelBuffer(width: 301, height: 333, format: .rgb24)
        try Resize.bilinear(photo, into: &odd)
        let detector = CountingDetector(try FaceDetector())
        let tracker = try FaceTracker(detector: detector, options: .init(schedule: .inline(interval: 10)))
        var reported: [(PixelBuffer, [Face])] = []
        for frame in [photo, photo, smaller, smaller, odd, photo] { reported.append((frame, try tracker.faces(in: frame))) }
        // A pass on the first frame and on each first frame of a new size (the interval is 10).
        #expect(detector.calls == 4, "\(detector.calls) passes")
        let width0 = try #require(reported[0].1.first?.bounds.width)
        for (frame, faces) in reported {
            try #require(faces.count == 1, "\(frame.width)x\(frame.height): \(faces)")
            let b = faces[0].bounds
            #expect(
                b.x >= -1 && b.y >= -1 && b.x + b.width <= frame.width + 1 && b.y + b.height <= frame.height + 1,
                "\(b) in \(frame.width)x\(frame.height)")
            // The box scales with the image (within 15%).
            let want = Double(width0) * Double(frame.width) / 512
            #expect(abs(Double(b.width) - want) <= 0.15 * want, "\(frame.width)x\(frame.height): width \(b.width), want ~\(Int(want))")
        }
    }

    @Test("a face that jumps calls for a pass at once and is found where it went")
    func jump() throws {
        let video = try astronautVideo([(50, 50), (56, 52), (400, 120), (404, 122)])
        let detector = CountingDetector(try FaceDetector())
        let tracker = try FaceTracker(detector: detector, options: .init(schedule: .inline(interval: 10)))
        var reported: [[Face]] = []
        for frame in video.frames { reported.append(try tracker.faces(in: frame)) }
        #expect(detector.calls == 2, "a pass on the first frame and on the jump")
        #expect(reported[2].count == 1 && reported[2][0].bounds.iou(video.faces[2]!) > 0.5, "\(reported[2])")
    }

    @Test("a face coming closer is carried as it grows, its box with it, with no pass called for it")
    func followsAFaceComingCloser() throws {
        // The astronaut's head pasted at 150 px and grown 5% a frame to ~300 px about one
        // point, over the coffee scene. At one size the correlation lost it within a few
        // frames, and each loss called a pass.
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let head = try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200))
        var scene = try PixelBuffer(width: 640, height: 360, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
        var frames: [PixelBuffer] = []
        var truths: [Rect] = []
        for n in 0..<15 {
            let side = Int((150 * pow(1.05, Double(n))).rounded())
            var sized = try PixelBuffer(width: side, height: side, format: .rgb24)
            try Resize.bilinear(head, into: &sized)
            var frame = scene.copy()
            let (x, y) = (320 - side / 2, 180 - side / 2)
            paste(sized, into: &frame, x: x, y: y)
            frames.append(try PixelFormatConversion.convert(frame, to: .nv12VideoRange))
            // The face in the head crop: about x 50…150, y 48…163 of 200.
            let k = Double(side) / 200
            truths.append(
                Rect(x: x + Int(50 * k), y: y + Int(48 * k), width: Int((100 * k).rounded()), height: Int((115 * k).rounded())))
        }
        let detector = CountingDetector(try FaceDetector())
        var options = FaceTracker.Options(schedule: .inline(interval: 100))
        options.quietInterval = 100
        let tracker = try FaceTracker(detector: detector, options: options)
        var widths: [Int] = []
        for (frame, truth) in zip(frames, truths) {
            let faces = try tracker.faces(in: frame)
            #expect(faces.count == 1 && faces[0].bounds.iou(truth) > 0.5, "\(faces.map(\.bounds)) vs \(truth)")
            widths.append(faces.first?.bounds.width ?? 0)
        }
        #expect(detector.calls == 1, "passes: \(detector.calls) (the first frame's only)")
        #expect(widths.last ?? 0 > 3 * (widths.first ?? 0) / 2, "the box grew with the face: \(widths)")
    }

    @Test(
        "a face passing behind something is taken up again as it comes out, with no pass called for it; not without coasting, nor where the network's box for it was weak",
        arguments: [(30, 0.9), (0, 0.9), (30, 0.4)])
    func comesOutFromBehind(coastFrames: Int, confidence: Double) throws {
        // The astronaut's head (120 px, its face ~60 px) crosses the coffee scene 12 px a frame
        // behind a grey post 100 px wide: covered from about frame 14, out again from frame 24.
        // The network sees the face on the first frame only (the passes called when it is lost
        // find nothing): only the correlation can find it again.
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        var head = try PixelBuffer(width: 120, height: 120, format: .rgb24)
        try Resize.bilinear(try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200)), into: &head)
        var scene = try PixelBuffer(width: 640, height: 360, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
        var post = try PixelBuffer(width: 100, height: 360, format: .rgb24)
        post.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 140) }
        func face(_ n: Int) -> Rect { Rect(x: 40 + 12 * n + 30, y: 100 + 29, width: 60, height: 69) } // in the head
        let detector = ScriptedDetector([DetectionPass(faces: [Face(bounds: face(0), confidence: confidence)]), DetectionPass(faces: [])])
        var options = FaceTracker.Options(schedule: .inline(interval: 100))
        options.quietInterval = 100
        options.coastFrames = coastFrames
        let tracker = try FaceTracker(detector: detector, options: options)
        var reported: [Int] = []
        for n in 0..<36 {
            var frame = scene.copy()
            paste(head, into: &frame, x: 40 + 12 * n, y: 100)
            paste(post, into: &frame, x: 260, y: 0)
            let faces = try tracker.faces(in: try PixelFormatConversion.convert(frame, to: .nv12VideoRange))
            if faces.contains(where: { $0.bounds.iou(face(n)) > 0.5 }) { reported.append(n) }
            #expect(faces.count <= 1, "frame \(n): \(faces.map(\.bounds))")
        }
        #expect(reported.starts(with: 0..<10), "reported on \(reported)")
        let afterwards = reported.filter { $0 >= 20 }
        if coastFrames > 0 && confidence > 0.6 {
            #expect(afterwards.first ?? 99 <= 26 && afterwards.count >= 36 - 27, "reported on \(reported)")
            #expect(detector.calls <= 2, "passes: \(detector.calls)")
        } else {
            #expect(afterwards.isEmpty, "reported on \(reported)")
        }
    }

    @Test("a face leaving at an edge is followed while most of it is in view, with no pass called for it")
    func followedOutOfTheFrame() throws {
        // The astronaut's head moves left 10 px a frame until 30% of its face is out of view.
        // The patch no longer fitted once the edge cut the face: it was lost on each frame,
        // and each loss called a pass that found the cut face again.
        let video = try astronautVideo((0..<13).map { (40 - 10 * $0, 80) })
        let detector = CountingDetector(try FaceDetector())
        var options = FaceTracker.Options(schedule: .inline(interval: 100))
        options.quietInterval = 100
        let tracker = try FaceTracker(detector: detector, options: options)
        for (n, (frame, face)) in zip(video.frames, video.faces).enumerated() {
            let truth = face!.clamped(width: 640, height: 360)
            let faces = try tracker.faces(in: frame)
            #expect(faces.count == 1 && faces[0].bounds.iou(truth) > 0.6, "frame \(n): \(faces.map(\.bounds)) vs \(truth)")
        }
        #expect(detector.calls == 1, "passes: \(detector.calls) (the first frame's only)")
    }

    @Test(
        "a small face lost against the edge it was moving towards has left: no tile's pass is called for it; a small face lost in view, or still against an edge, calls for its tile's"
    )
    func smallFaceLeavingCallsNoTile() throws {
        // The detector claims to shrink frames by 4, so the ~100 px face is a tile's (small). No
        // pass on schedule after the first frame's: any pass after it is called by a lost face.
        func passesAfterTheFirstFrame(_ positions: [(Int, Int)?]) throws -> (regions: [Rect?], reported: [Int]) {
            let video = try astronautVideo(positions)
            let detector = RegionRecorder(try FaceDetector(), scale: 0.25)
            var options = FaceTracker.Options(schedule: .inline(interval: 100))
            options.quietInterval = 100
            let tracker = try FaceTracker(detector: detector, options: options)
            var reported: [Int] = []
            for (n, frame) in video.frames.enumerated() {
                reported.append(try tracker.faces(in: frame).count)
                if n == 0 { detector.clear() }
            }
            return (detector.regions, reported)
        }
        // Right, 12 px a frame, until its face is out of view.
        let leaving = try passesAfterTheFirstFrame((0..<30).map { (300 + 12 * $0, 80) })
        #expect(leaving.reported.first == 1 && leaving.reported.last == 0, "\(leaving.reported)")
        #expect(leaving.regions.isEmpty, "passes called: \(leaving.regions)")
        // Gone in the middle of the frame, or still against its edge: its tile is looked at.
        let vanishing = try passesAfterTheFirstFrame(Array(repeating: (220, 80), count: 5) + Array(repeating: nil, count: 5))
        #expect(vanishing.regions.contains { $0 != nil }, "passes called: \(vanishing.regions)")
        let restingAgainstTheEdge = try passesAfterTheFirstFrame(Array(repeating: (490, 80), count: 5) + Array(repeating: nil, count: 5))
        #expect(restingAgainstTheEdge.regions.contains { $0 != nil }, "passes called: \(restingAgainstTheEdge.regions)")
    }

    @Test("a face that leaves is no longer reported")
    func leaves() throws {
        let video = try astronautVideo([(100, 80), (110, 80), (120, 80), nil, nil, nil])
        let tracker = try FaceTracker(detector: try FaceDetector(), options: .init(schedule: .inline(interval: 3)))
        let counts = try video.frames.map { try tracker.faces(in: $0).count }
        #expect(counts == [1, 1, 1, 0, 0, 0], "\(counts)")
    }

    @Test("with the Haar cascade too")
    func haar() throws {
        let video = try astronautVideo((0..<6).map { (100 + $0 * 10, 100) })
        let tracker = try FaceTracker(detector: try HaarFaceDetector(options: .init(minFaceSize: 60)))
        let counts = try video.frames.map { try tracker.faces(in: $0).count }
        let direct = try HaarFaceDetector(options: .init(minFaceSize: 60)).detect(in: video.frames[0]).map(\.bounds)
        #expect(counts.allSatisfy { $0 == 1 }, "\(counts) \(direct)")
    }

    @Test("invalid options are thrown errors")
    func invalidOptions() throws {
        let detector = try FaceDetector()
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: .init(schedule: .inline(interval: 0))) }
        var options = FaceTracker.Options()
        options.patchSize = 2
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
        options = FaceTracker.Options()
        options.confirmationThreshold = 1.5
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
        options.confirmationThreshold = .nan
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
        options = FaceTracker.Options()
        options.establishedAfter = 0
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
        options = FaceTracker.Options()
        options.coastFrames = -1
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
        options = FaceTracker.Options()
        options.revivalCorrelation = .nan
        #expect(throws: FaceDetectorError.self) { try FaceTracker(detector: detector, options: options) }
    }
}
