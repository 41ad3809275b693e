import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

@Suite("FaceTracker: the background schedule")
struct BackgroundScheduleTests {
    @Test(
        "the background schedule reports the face on the frame its first pass joins, and keeps it, each pass's faces carried through the frames it took; passes off the caller's thread"
    )
    func background() throws {
        let video = try astronautVideo((0..<40).map { (60 + $0 * 8, 80 + $0 * 2) })
        let gated = GatedDetector(try FaceDetector())
        let detector = ThreadNoting(gated)
        let tracker = try FaceTracker(detector: detector, options: .init(schedule: .background))
        let caller = pthread_self()
        var counts: [Int] = []
        var hits = 0
        for (i, (frame, truth)) in zip(video.frames, video.faces).enumerated() {
            let faces = try tracker.faces(in: frame)
            counts.append(faces.count)
            if let face = faces.first, face.bounds.iou(truth!) > 0.5 { hits += 1 }
            // A pass lasts three frames: the camera is faster than the network.
            if i % 3 == 2 {
                gated.release()
                tracker.waitUntilIdle()
            }
        }
        gated.open()
        tracker.shutdown()
        let first = try #require(counts.firstIndex(of: 1), "\(counts)")
        // Found on the frame the first pass's result joined: its result age.
        let statistics = tracker.statistics
        #expect(statistics.maxAge >= 2, "passes that took frames: \(statistics)")
        #expect(first <= statistics.maxAge + 1, "\(counts) \(statistics)")
        // Every pass ran off the caller's thread (no prepare(), so the first pass is not on the
        // first frame).
        let threads = detector.passThreads
        #expect(!threads.isEmpty && threads.allSatisfy { pthread_equal($0, caller) == 0 }, "\(threads.count) passes")
        #expect(counts[first...].allSatisfy { $0 == 1 }, "\(counts)")
        #expect(hits == counts.count - first, "\(hits) of \(counts.count - first) boxes where the face is")
    }

    @Test(
        "after prepare(), a detector quick enough has the first background pass on the first frame itself (again after reset()); one slower than the limit, or no limit, leaves that frame to the worker"
    )
    func firstPassOnFrame() throws {
        let video = try astronautVideo(Array(repeating: (100, 80), count: 4))
        let face = Face(bounds: video.faces[0]!, confidence: 0.9)
        var options = FaceTracker.Options(schedule: .background)
        options.tiles = false
        let (width, height) = (video.frames[0].width, video.frames[0].height)

        let detector = ScriptedDetector([DetectionPass(faces: [face])])
        let tracker = try FaceTracker(detector: detector, options: options)
        defer { tracker.waitUntilIdle() }
        try tracker.prepare(width: width, height: height)
        let calls = detector.calls // prepare's own passes
        let first = try tracker.faces(in: video.frames[0])
        #expect(first.count == 1 && first[0].bounds.iou(face.bounds) > 0.8, "\(first)")
        #expect(detector.calls == calls + 1 && tracker.statistics.passes == 1, "one pass, on this frame")
        tracker.waitUntilIdle()
        #expect(tracker.statistics.maxAge == 0)
        tracker.reset()
        #expect(try tracker.faces(in: video.frames[1]).count == 1, "a reset starts with a pass on its first frame again")

        for limit: Duration? in [.zero, nil] {
            options.firstPassOnFrameWithin = limit
            let plain = try FaceTracker(detector: ScriptedDetector([DetectionPass(faces: [face])]), options: options)
            try plain.prepare(width: width, height: height)
            #expect(try plain.faces(in: video.frames[0]).isEmpty, "limit \(String(describing: limit)): the worker's pass")
            plain.waitUntilIdle()
            #expect(try plain.faces(in: video.frames[1]).count == 1)
        }
    }

    @Test(
        "a background tracker let go once its passes are over frees its detector at once: the pass lane no longer holds it (a detector's networks outlived a run of framekit profile)"
    )
    func detectorFreedWhenIdle() throws {
        let frame = try PixelBuffer(width: 64, height: 64, format: .gray8)
        weak var released: ScriptedDetector?
        for round in 0..<50 {
            var tracker: FaceTracker? = nil
            do {
                let detector = ScriptedDetector([DetectionPass(faces: [])])
                released = detector
                tracker = try FaceTracker(detector: detector, options: .init(schedule: .background))
            }
            for _ in 0..<3 { _ = try tracker?.faces(in: frame) }
            tracker?.waitUntilIdle()
            #expect((released?.calls ?? 0) > 0, "round \(round): a pass ran")
            tracker = nil
            #expect(released == nil, "round \(round): the detector is still held")
        }
    }

    @Test(
        "a pass that finishes long after its frame (30 frames, past any fixed history) still reports its faces, where they are now; the late frames are counted"
    )
    func latePassKeepsItsFaces() throws {
        let video = try astronautVideo((0..<40).map { (60 + $0 * 8, 80 + $0 * 2) })
        let gated = GatedDetector(try FaceDetector())
        let tracker = try FaceTracker(detector: gated, options: .init(schedule: .background))
        defer {
            gated.open()
            tracker.waitUntilIdle()
        }
        // Frames 1…30 while the first pass (on frame 1) is held: no face is known yet.
        for frame in video.frames[0..<30] { #expect(try tracker.faces(in: frame).isEmpty) }
        gated.release()
        tracker.waitUntilIdle()
        // Its face joins on frame 31, carried across the 30 frames to where the face is now;
        // the next pass (on frame 31) is held, and tracking carries the face meanwhile.
        for i in 30..<40 {
            let faces = try tracker.faces(in: video.frames[i])
            #expect(faces.count == 1, "frame \(i + 1): \(faces.map(\.bounds))")
            if let face = faces.first {
                #expect(face.bounds.iou(video.faces[i]!) > 0.5, "frame \(i + 1): \(face.bounds) vs \(video.faces[i]!)")
            }
        }
        let statistics = tracker.statistics
        #expect(statistics.passes == 1 && statistics.maxAge == 30, "\(statistics)")
        #expect(statistics.framesWithoutPass == 38, "frames 2…30 and 32…40 came while a pass was held")
        #expect(statistics.latency(quantile: 0.5) > 0)
    }
}
