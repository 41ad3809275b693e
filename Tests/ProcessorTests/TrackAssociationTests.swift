import FrameKit
import Testing

@testable import FrameProcessors

/// The tracker's association with no pixels in play: tracks and a pass's boxes in, tracks out.
@Suite("Track association, without pixels")
struct TrackAssociationTests {
    let gray: PixelBuffer
    /// 1280x720 shrunk by half for a whole-frame pass: faces from 64 px are the whole frame's to
    /// judge, smaller ones the tiles'.
    let plan = TilePlan(width: 1280, height: 720, scale: 0.5)

    init() throws { gray = try PixelBuffer(width: 1280, height: 720, format: .gray8) }

    func track(_ x: Int, _ y: Int, _ side: Int, reports: Int = 1) -> Track {
        var t = Track(face: Face(bounds: Rect(x: x, y: y, width: side, height: side)), gray: gray, patchSize: 24)
        t.reports = reports
        return t
    }

    func face(_ x: Int, _ y: Int, _ side: Int, _ confidence: Double = 0.9) -> Face {
        Face(bounds: Rect(x: x, y: y, width: side, height: side), confidence: confidence)
    }

    /// A pass run on the current frame (faces placed where the detector put them), or on an
    /// earlier one (`passFrame`, its faces brought to `frame` by `reacquire`).
    func association(
        _ pass: DetectionPass, region: Rect? = nil, policy: TrackerPolicy = .standard, passFrame: Int = 7, frame: Int = 7,
        reacquire: ((Face) -> Track?)? = nil
    ) -> TrackAssociation {
        TrackAssociation(
            whole: pass, look: .region(region), plan: plan, passFrame: passFrame, frame: frame, options: FaceTracker.Options(),
            policy: policy, reacquire: reacquire ?? { [gray] face in Track(face: face, gray: gray, patchSize: 24) })
    }

    @Test("a whole-frame pass renews the track its box overlaps, starts one for a new face, and counts a large unseen one missed")
    func wholeFramePass() {
        let pass = DetectionPass(faces: [face(106, 100, 120), face(900, 400, 110)])
        let after = association(pass).merge([track(100, 100, 120), track(600, 300, 100)])
        #expect(after.count == 3)
        let renewed = after.first { $0.box.rect.x == 106 }
        #expect(renewed?.reports == 2 && renewed?.missedPasses == 0)
        #expect(after.contains { $0.box.rect.x == 900 && $0.reports == 1 })
        #expect(after.first { $0.box.rect.x == 600 }?.missedPasses == 1)
        // Missed again by the next pass: past maxMissedPasses (1), it ends.
        let next = association(DetectionPass(faces: [])).merge(after)
        #expect(!next.contains { $0.box.rect.x == 600 })
    }

    @Test("a tile's pass judges the small tracks it sees whole, never a large one, and starts no track for a large face")
    func tilePass() throws {
        let tile = try #require(plan.tiles.first)
        let small = track(tile.x + 50, tile.y + 50, 30)
        let large = track(tile.x + 200, tile.y + 100, 120)
        let pass = DetectionPass(faces: [face(tile.x + 300, tile.y + 300, 150)])
        let after = association(pass, region: tile).merge([small, large])
        #expect(after.count == 2) // no track for the large face the tile saw
        #expect(after.first { $0.box.rect.width == 30 }?.missedPasses == 1)
        #expect(after.first { $0.box.rect.width == 120 }?.missedPasses == 0)
        // A whole-frame pass does not judge the small one (it cannot be trusted to see it),
        // once a tile has reported it.
        var seen = small
        seen.seenByTile = true
        let judged = association(DetectionPass(faces: [])).merge([seen])
        #expect(judged.first?.missedPasses == 0)
    }

    @Test("a weak box a quarter on a stronger face of the same pass is its second box: no track of its own")
    func secondBox() {
        let pass = DetectionPass(faces: [face(400, 200, 150, 0.95), face(520, 230, 60, 0.32)])
        let after = association(pass).merge([])
        #expect(after.count == 1 && after[0].box.rect.width == 150)
    }

    @Test(
        "a weak box beside a face, on its hair (a fifth on the face's box, half on its head), is its second box too; one clear of the head, or confident, is a face"
    )
    func secondBoxOnTheHead() {
        // The face 80 px wide at x 100…180; the weak box 40 px wide at x 68…108: 8 px on the
        // face's box, 28 px on its head (which reaches x 80).
        let beside = face(68, 110, 40, 0.31)
        let after = association(DetectionPass(faces: [face(100, 100, 80, 0.9), beside])).merge([])
        #expect(after.count == 1 && after[0].box.rect.width == 80)
        #expect(association(DetectionPass(faces: [face(100, 100, 80, 0.9), face(30, 110, 40, 0.31)])).merge([]).count == 2)
        #expect(association(DetectionPass(faces: [face(100, 100, 80, 0.9), face(68, 110, 40, 0.6)])).merge([]).count == 2)
    }

    @Test(
        "weaker boxes renew only established tracks, from the box and with its confidence, and do not count towards establishing"
    )
    func candidates() {
        var missedOnce = track(200, 100, 100, reports: 3)
        missedOnce.missedPasses = 1
        let pass = DetectionPass(
            faces: [], candidates: [face(190, 96, 130, 0.1), face(603, 100, 100, 0.1), face(906, 100, 110, 0.2)])
        let after = association(pass).merge([missedOnce, track(600, 100, 100, reports: 1), track(900, 100, 100, reports: 3)])
        let renewed = after.first { $0.box.rect.x == 190 }
        #expect(renewed?.reports == 3 && renewed?.missedPasses == 0 && renewed?.box.rect.width == 130, "\(after.map(\.box))")
        #expect(renewed?.face.confidence == 0.1)
        let fromBox = after.first { $0.box.rect.x == 906 }
        #expect(fromBox?.reports == 3 && fromBox?.box.rect.width == 110 && fromBox?.face.confidence == 0.2, "\(after.map(\.box))")
        #expect(after.first { $0.box.rect.x == 600 }?.missedPasses == 1, "not established: judged missed")
    }

    @Test(
        "a weak box lying partly on a face the same pass reported still renews the established track beside that face, from the box"
    )
    func weakBoxOnAReportedFace() {
        // The track at x 200…300, the reported face at x 300…400 beside it (no overlap); the
        // weak box at x 240…340: IoU 0.43 with the track, 0.25 with the face.
        var beside = track(200, 100, 100, reports: 3)
        beside.missedPasses = 1
        let pass = DetectionPass(faces: [face(300, 100, 100, 0.95)], candidates: [face(240, 100, 100, 0.2)])
        let after = association(pass).merge([beside])
        #expect(after.count == 2, "\(after.map(\.box))")
        let renewed = after.first { $0.box.rect.x == 240 }
        #expect(renewed?.missedPasses == 0 && renewed?.face.confidence == 0.2, "\(after.map(\.box))")
    }

    @Test(
        "a lost face's box lying on a followed face (IoU over TrackerPolicy.liesOnOverlap, though no duplicate) goes; with the rule off it stayed"
    )
    func lostFaceLyingOnAnother() {
        let followed = track(100, 100, 100)
        var lost = track(150, 100, 100) // IoU 0.33 with the followed face, half of it inside
        lost.isFound = false
        #expect(TrackAssociation.withoutDuplicates([followed, lost]).count == 1)
        var off = TrackerPolicy.standard
        off.liesOnOverlap = 1
        #expect(TrackAssociation.withoutDuplicates([followed, lost], policy: off).count == 2)
    }

    @Test(
        "two tracks on one face (IoU over TrackerPolicy.duplicateOverlap): the one missed by fewer passes stays; a face beside it overlapping less, and a small one inside a larger one, are kept"
    )
    func duplicates() {
        var stale = track(100, 100, 100)
        stale.missedPasses = 1
        let fresh = track(110, 105, 100)
        let beside = track(180, 100, 100) // IoU 0.17 with the fresh one
        let small = track(520, 320, 40)
        let large = track(500, 300, 120) // holds all of the small one: IoU 0.11
        let kept = TrackAssociation.withoutDuplicates([stale, fresh, beside, small, large])
        #expect(kept.count == 4)
        #expect(kept.contains { $0.box.rect.x == 110 } && kept.contains { $0.box.rect.x == 180 })
        #expect(kept.contains { $0.box.rect.x == 520 } && kept.contains { $0.box.rect.x == 500 })
    }

    @Test(
        "two tiles of one sweep see the same small face: the second renews the track the first started, matched where it was in the sweep's frame (one track, reported twice)"
    )
    func sweepTilesShareAFace() throws {
        // The sweep ran on frame 1; its tiles' results join the tracks on frame 3, each face
        // carried there by correlation through the frames since.
        // The coffee photo's texture carries the box; it lies where the first two tiles overlap.
        var gray = try PixelBuffer(width: 1280, height: 720, format: .gray8)
        try ColorConversion.convertToGray(try smallFaceScene().empty, into: &gray)
        let history = [(frame: 1, gray: gray), (frame: 2, gray: gray), (frame: 3, gray: gray)]
        let options = FaceTracker.Options()
        let overlap = plan.tiles[0].intersection(plan.tiles[1])
        let truth = Rect(x: overlap.x + overlap.width / 2 - 13, y: overlap.y + overlap.height / 2 - 15, width: 26, height: 30)
        let tiles = plan.tiles.filter { plan.seesWhole($0, Box(truth)) }
        try #require(tiles.count >= 2, "\(plan.tiles) \(truth)")
        func tilePass(_ tile: Rect, _ tracks: [Track]) -> [Track] {
            association(DetectionPass(faces: [Face(bounds: truth, confidence: 0.9)]), region: tile, passFrame: 1, frame: 3) { face in
                TrackerState.reacquire(face, passFrame: 1, frame: 3, gray: gray, history: history, options: options, policy: .standard)
            }
            .merge(tracks)
        }
        let first = tilePass(tiles[0], [])
        try #require(first.count == 1)
        let second = tilePass(tiles[1], first)
        #expect(second.count == 1 && second[0].reports == 2, "\(second.map { ($0.box.rect, $0.reports) })")
    }
}
