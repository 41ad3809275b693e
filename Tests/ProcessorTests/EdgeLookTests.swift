import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

/// A detector that claims to shrink frames by `scale` (so a tracker plans tiles, and may look
/// at an edge at the tiles' scale), each look noted. Whole-frame passes and tiles find nothing; the first
/// edge look finds `edgeFace` where the strip holds it (later ones would find it elsewhere:
/// the scene moves).
final class EdgeLookRecorder: ScriptedPasses {
    enum Look: Equatable {
        case whole
        case tile(Rect)
        case edge(Rect, scale: Double)
    }
    let edgeFace: Rect?
    let scale: Double
    private let log = Mutex<[Look]>([])
    init(edgeFace: Rect? = nil, scale: Double = 0.5) { (self.edgeFace, self.scale) = (edgeFace, scale) }
    var looks: [Look] { log.withLock { $0 } }
    var name: String { "edge-look-recorder" }
    func passScale(width: Int, height: Int) -> Double { scale }
    /// A region at a scale of its own is the edge (or a closer look).
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        guard let scale, let region else {
            log.withLock { $0.append(region.map { .tile($0) } ?? .whole) }
            return DetectionPass(faces: [])
        }
        let first = log.withLock { log in
            defer { log.append(.edge(region, scale: scale)) }
            return !log.contains { if case .edge = $0 { true } else { false } }
        }
        guard first, let edgeFace, region.intersection(edgeFace) == edgeFace else { return DetectionPass(faces: []) }
        return DetectionPass(faces: [Face(bounds: edgeFace, confidence: 0.9)])
    }
}

@Suite("FaceTracker: under a pan, passes look at the edge the camera brings into view (Options.edgeLooks)")
struct EdgeLookTests {
    /// The looks asked for on each frame of `frames` (inline schedule, interval 4), and the
    /// faces reported on each.
    private func run(
        _ frames: [PixelBuffer], edgeLooks: Int = 2, schedule: FaceTracker.Schedule = .inline(interval: 4), edgeFace: Rect? = nil,
        scale: Double = 0.5
    ) throws -> (looks: [[EdgeLookRecorder.Look]], faces: [[Face]]) {
        let detector = EdgeLookRecorder(edgeFace: edgeFace, scale: scale)
        var options = FaceTracker.Options(schedule: schedule)
        options.edgeLooks = edgeLooks
        let tracker = try FaceTracker(detector: detector, options: options)
        var looks: [[EdgeLookRecorder.Look]] = []
        var faces: [[Face]] = []
        for frame in frames {
            let before = detector.looks.count
            faces.append(try tracker.faces(in: frame))
            tracker.waitUntilIdle()
            looks.append(Array(detector.looks[before...]))
        }
        return (looks, faces)
    }

    private static func edges(_ looks: [[EdgeLookRecorder.Look]]) -> [(frame: Int, strip: Rect, scale: Double)] {
        looks.enumerated().flatMap { frame, looks in
            looks.compactMap { look -> (Int, Rect, Double)? in
                if case .edge(let strip, let scale) = look { return (frame + 1, strip, scale) }
                return nil
            }
        }
    }

    @Test(
        "the scene moving left: passes on schedule look at the right edge, a 160 px strip at the tiles' scale, two in a row between whole-frame passes; a still camera, or edgeLooks 0: whole-frame passes only"
    )
    func looksWhereTheSceneComesIn() throws {
        // The coffee scene panning 4 px a frame (the camera turning right), no face.
        let panning = try astronautVideo(Array(repeating: nil, count: 40), pan: (0..<40).map { 4 * $0 }).frames
        let looks = try run(panning).looks
        let edges = Self.edges(looks)
        #expect(edges.count >= 4, "\(looks)")
        for edge in edges {
            #expect(edge.strip == Rect(x: 480, y: 0, width: 160, height: 360) && edge.scale == 1, "frame \(edge.frame): \(edge)")
        }
        // Between two whole-frame passes on schedule, at most two edge looks; the tiles' turns
        // on frames of neither.
        var inARow = 0
        for frameLooks in looks {
            if frameLooks.contains(.whole) { inARow = 0 }
            let edgeLooks = frameLooks.filter { if case .edge = $0 { true } else { false } }.count
            inARow += edgeLooks
            #expect(inARow <= 2, "\(looks)")
            #expect(edgeLooks == 0 || frameLooks.count == 1, "\(looks)")
        }
        #expect(looks.flatMap { $0 }.contains(.whole) && looks.count == 40)

        // Tiles shrunk by half (the pass by 4): a strip twice as wide at scale 0.5, 160 px at the
        // network's input.
        let halfScale = Self.edges(try run(panning, scale: 0.25).looks)
        #expect(
            !halfScale.isEmpty && halfScale.allSatisfy { $0.strip == Rect(x: 320, y: 0, width: 320, height: 360) && $0.scale == 0.5 },
            "\(halfScale)")

        // The camera turning left: the left edge.
        let left = try astronautVideo(Array(repeating: nil, count: 40), pan: (0..<40).map { 160 - 4 * $0 }).frames
        let leftEdges = Self.edges(try run(left).looks)
        #expect(!leftEdges.isEmpty && leftEdges.allSatisfy { $0.strip == Rect(x: 0, y: 0, width: 160, height: 360) }, "\(leftEdges)")

        let still = try astronautVideo(Array(repeating: nil, count: 40)).frames
        let stillLooks = try run(still).looks
        #expect(Self.edges(stillLooks).isEmpty)
        let offLooks = try run(panning, edgeLooks: 0).looks
        #expect(Self.edges(offLooks).isEmpty)
    }

    @Test(
        "a small face an edge look finds is tracked from that frame on, as a tile's: whole-frame passes do not judge it; with edgeLooks 0 it is not found (whole-frame passes and the tiles here miss it)"
    )
    func edgeFindsASmallFace() throws {
        let panning = try astronautVideo(Array(repeating: nil, count: 16), pan: (0..<16).map { 4 * $0 }).frames
        // 40 px of the coffee scene inside the right-hand strip on the first edge look's frame.
        let box = Rect(x: 560, y: 150, width: 40, height: 40)
        // One edge look between whole-frame passes: the next look on schedule is the whole frame's.
        let on = try run(panning, edgeLooks: 1, edgeFace: box)
        guard let first = Self.edges(on.looks).first else {
            Issue.record("no edge look: \(on.looks)")
            return
        }
        #expect(first.frame <= 9, "\(on.looks)")
        // Carried with the scene, 4 px a frame to the left, through the next whole-frame pass
        // (up to the next edge look, which finds nothing here).
        let next = Self.edges(on.looks).dropFirst().first?.frame ?? 17
        #expect(on.looks[first.frame + 3].contains(.whole) && next > first.frame + 4, "\(on.looks)")
        for frame in first.frame..<next {
            let expected = Rect(x: box.x - 4 * (frame - first.frame), y: box.y, width: box.width, height: box.height)
            let faces = on.faces[frame - 1]
            #expect(faces.count == 1 && faces[0].bounds.iou(expected) > 0.7, "frame \(frame): \(faces.map(\.bounds))")
        }
        #expect(on.faces[..<(first.frame - 1)].allSatisfy { $0.isEmpty })
        let off = try run(panning, edgeLooks: 0, edgeFace: box)
        #expect(Self.edges(off.looks).isEmpty)
        #expect(off.faces.allSatisfy { $0.isEmpty })
    }

    @Test("the background schedule looks at the entering edge too, and tracks what it finds there")
    func background() throws {
        let panning = try astronautVideo(Array(repeating: nil, count: 30), pan: (0..<30).map { 4 * $0 }).frames
        let box = Rect(x: 580, y: 150, width: 40, height: 40)
        let result = try run(panning, schedule: .background, edgeFace: box)
        let edges = Self.edges(result.looks)
        #expect(!edges.isEmpty && edges.allSatisfy { $0.strip == Rect(x: 480, y: 0, width: 160, height: 360) }, "\(result.looks)")
        #expect(result.faces.contains { !$0.isEmpty }, "the face the edge look found is reported")
    }

    @Test(
        "CenterFace: an 18 px face by the right edge of a 720p frame, which the whole-frame pass misses, is found by a strip of that edge at the tiles' scale, in the frame's coordinates"
    )
    func stripAtTheTilesScale() throws {
        var frame = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &frame)
        var small = try PixelBuffer(width: 90, height: 90, format: .rgb24)
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.astronaut), into: &small)
        paste(small, into: &frame, x: 1150, y: 300)
        // Her face spans about x 170…275, y 60…165 of the 512 px photo.
        let face = Rect(x: 1150 + 30, y: 300 + 11, width: 18, height: 19)
        let detector = try FaceDetector()
        let strip = Rect(x: 1120, y: 0, width: 160, height: 720)
        let edge = try detector.pass(in: frame, region: strip, scale: 1, candidatesDownTo: 0.3).faces
        #expect(edge.count == 1 && edge[0].bounds.iou(face) > 0.4, "\(edge.map(\.bounds))")
        let whole = try detector.pass(in: frame, candidatesDownTo: 0.3).faces
        #expect(!whole.contains { $0.bounds.iou(face) > 0.4 }, "\(whole.map(\.bounds))")
        // The scale is the strip's: shrunk four times, the face is too small to be seen.
        let shrunk = try detector.pass(in: frame, region: strip, scale: 0.25, candidatesDownTo: 0.3).faces
        #expect(!shrunk.contains { $0.bounds.iou(face) > 0.4 }, "\(shrunk.map(\.bounds))")
    }
}
