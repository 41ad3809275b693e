import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

/// A detector that counts its calls (how often the tracker ran a full pass).
final class CountingDetector: FaceDetecting {
    let inner: any FaceDetecting
    private let count = Mutex(0)
    init(_ inner: any FaceDetecting) { self.inner = inner }
    var calls: Int { count.withLock { $0 } }
    var name: String { inner.name }
    var modelURL: URL { inner.modelURL }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        count.withLock { $0 += 1 }
        return try inner.pass(in: image, region: region, scale: scale, candidatesDownTo: floor)
    }
    func passScale(width: Int, height: Int) -> Double { inner.passScale(width: width, height: height) }
}

/// Passes under way at once across detectors (trackers sharing a scheduler), and each one's count.
final class PassOverlap: Sendable {
    private let state = Mutex<(now: Int, most: Int, passes: [Int: Int])>((0, 0, [:]))
    var most: Int { state.withLock { $0.most } }
    var passes: [Int: Int] { state.withLock { $0.passes } }
    func begin(_ id: Int) {
        state.withLock {
            $0.now += 1
            $0.most = max($0.most, $0.now)
            $0.passes[id, default: 0] += 1
        }
    }
    func end() { state.withLock { $0.now -= 1 } }
}

/// A detector whose passes wait until the test lets them through (`gates[id]`), noting in
/// `overlap` which passes are under way at once and in `turns` the order they began.
final class TurnDetector: FaceDetecting {
    let id: Int
    let overlap: PassOverlap
    let turns: TurnLog
    private let gate = DispatchSemaphore(value: 0)
    init(id: Int, overlap: PassOverlap, turns: TurnLog) { (self.id, self.overlap, self.turns) = (id, overlap, turns) }
    var name: String { "turns" }
    var modelURL: URL { URL(fileURLWithPath: "/") }
    func release() { gate.signal() }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        overlap.begin(id)
        turns.began(id)
        gate.wait()
        overlap.end()
        return DetectionPass(faces: [])
    }
}

/// The order passes began in, and a semaphore signalled as each begins.
final class TurnLog: Sendable {
    private let order = Mutex<[Int]>([])
    let began = DispatchSemaphore(value: 0)
    var turns: [Int] { order.withLock { $0 } }
    func began(_ id: Int) {
        order.withLock { $0.append(id) }
        began.signal()
    }
}

/// A wall clock a test moves by hand.
final class FakeClock: Sendable {
    private let start = ContinuousClock.now
    private let offset = Mutex<Duration>(.zero)
    @Sendable func now() -> ContinuousClock.Instant { start + offset.withLock { $0 } }
    func advance(_ d: Duration) { offset.withLock { $0 += d } }
}

/// A detector that notes the thread of every pass it is asked for (every kind of look) and
/// passes it on to `inner`: where a tracker runs its passes.
final class ThreadNoting: FaceDetecting {
    let inner: any FaceDetecting
    private let threads = Mutex<[pthread_t]>([])
    init(_ inner: any FaceDetecting) { self.inner = inner }
    /// The threads passes ran on, one entry a pass.
    var passThreads: [pthread_t] { threads.withLock { $0 } }
    private func note() { threads.withLock { $0.append(pthread_self()) } }
    var name: String { inner.name }
    var modelURL: URL { inner.modelURL }
    func prepare(width: Int, height: Int) throws(FaceDetectorError) { try inner.prepare(width: width, height: height) }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        note()
        return try inner.pass(in: image, region: region, scale: scale, candidatesDownTo: floor)
    }
    func passScale(width: Int, height: Int) -> Double { inner.passScale(width: width, height: height) }
}

/// A detector whose passes are scripted, one per call: faces and weaker candidates.
final class ScriptedDetector: FaceDetecting {
    let script: [DetectionPass]
    private let count = Mutex(0)
    init(_ script: [DetectionPass]) { self.script = script }
    var calls: Int { count.withLock { $0 } }
    var name: String { "scripted" }
    var modelURL: URL { URL(fileURLWithPath: "/") }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        let call = count.withLock { n -> Int in
            n += 1
            return n - 1
        }
        let pass = script[min(call, script.count - 1)]
        return DetectionPass(faces: pass.faces, candidates: pass.candidates.filter { ($0.confidence ?? 0) >= floor })
    }
}

/// A detector that notes the region of every pass but the quick look (nil: the whole frame);
/// `scale`: the shrink it claims instead of its own (so that a tracker plans tiles).
final class RegionRecorder: FaceDetecting {
    let inner: any FaceDetecting
    let scale: Double?
    private let log = Mutex<[Rect?]>([])
    init(_ inner: any FaceDetecting, scale: Double? = nil) { (self.inner, self.scale) = (inner, scale) }
    /// The regions of the passes so far (nil: the whole frame).
    var regions: [Rect?] { log.withLock { $0 } }
    func clear() { log.withLock { $0 = [] } }
    var name: String { inner.name }
    var modelURL: URL { inner.modelURL }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        // The quick look (the whole frame at a scale of its own) is not noted.
        if region != nil || scale == nil { log.withLock { $0.append(region) } }
        return try inner.pass(in: image, region: region, scale: scale, candidatesDownTo: floor)
    }
    func passScale(width: Int, height: Int) -> Double { scale ?? inner.passScale(width: width, height: height) }
}

/// A test's detector whose passes are scripted: no model file.
protocol ScriptedPasses: FaceDetecting {}

extension ScriptedPasses {
    var modelURL: URL { URL(fileURLWithPath: "/") }
}

/// A detector that shrinks frames by `scale` (so a tracker plans tiles) and whose passes follow
/// `script`: given the region and how many whole-frame passes came before, what it finds.
final class TiledScriptDetector: ScriptedPasses {
    let scale: Double
    let script: @Sendable (_ region: Rect?, _ wholeFramePassesBefore: Int) -> DetectionPass
    private let wholeFramePasses = Mutex(0)
    init(scale: Double, script: @escaping @Sendable (Rect?, Int) -> DetectionPass) { (self.scale, self.script) = (scale, script) }
    var name: String { "scripted" }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        let before = wholeFramePasses.withLock { n -> Int in
            defer { if region == nil { n += 1 } }
            return n
        }
        return script(region, before)
    }
    func passScale(width: Int, height: Int) -> Double { scale }
}

/// A detector whose passes wait until the test lets each one through: a pass as slow as the
/// test wants, with no clock involved.
final class GatedDetector: FaceDetecting {
    let inner: any FaceDetecting
    private let gate = DispatchSemaphore(value: 0)
    private let isOpen = Mutex(false)
    init(_ inner: any FaceDetecting) { self.inner = inner }
    var name: String { inner.name }
    var modelURL: URL { inner.modelURL }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        if !isOpen.withLock({ $0 }) { gate.wait() }
        return try inner.pass(in: image, region: region, scale: scale, candidatesDownTo: floor)
    }
    /// Lets one waiting (or the next) pass through.
    func release() { gate.signal() }
    /// Lets every pass through from now on.
    func open() {
        isOpen.withLock { $0 = true }
        gate.signal()
    }
}

/// A detector that shrinks frames (so a tracker takes its quick look) whose quick look finds
/// `quick` and whose whole-frame passes, each held until the test lets it through, find `full`.
final class QuickLookDetector: ScriptedPasses {
    let quick: [Face]
    let full: [Face]
    private let gate = DispatchSemaphore(value: 0)
    private let isOpen = Mutex(false)
    private let counts = Mutex((quick: 0, full: 0))
    init(quick: [Face], full: [Face]) { (self.quick, self.full) = (quick, full) }
    var quickLooks: Int { counts.withLock { $0.quick } }
    var passes: Int { counts.withLock { $0.full } }
    /// Signalled as each whole-frame pass begins (before it waits to be let through).
    let passBegan = DispatchSemaphore(value: 0)
    var name: String { "quick-look" }
    /// The quick look is the whole frame at a scale of its own; the rest are passes.
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        if region == nil, scale != nil {
            counts.withLock { $0.quick += 1 }
            return DetectionPass(faces: quick)
        }
        passBegan.signal()
        if !isOpen.withLock({ $0 }) { gate.wait() }
        counts.withLock { $0.full += 1 }
        return DetectionPass(faces: region == nil ? full : [])
    }
    func passScale(width: Int, height: Int) -> Double { 0.5 }
    /// Lets one waiting (or the next) pass through.
    func release() { gate.signal() }
    /// Lets every pass through from now on.
    func open() {
        isOpen.withLock { $0 = true }
        gate.signal()
    }
}

/// A 640x360 NV12 video: the astronaut's head over the coffee photo, at `positions` (top-left
/// of the 200x200 head crop; nil: no face in that frame). Returns frames and face boxes.
///
/// `pan`: the camera's offset in each frame (px; the coffee photo drawn wider and shifted by
/// it, the face where `positions` says). `plain`: a uniform gray scene instead of the photo.
/// `image` (RGB24) laid over `frame` (RGB24) with its top-left at `x`, `y`; what falls outside
/// the frame is left out.
func paste(_ image: PixelBuffer, into frame: inout PixelBuffer, x: Int, y: Int) {
    let (width, height) = (frame.width, frame.height)
    image.withUnsafeBytes(ofPlane: 0) { s, sp in
        frame.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
            for row in 0..<image.height where y + row >= 0 && y + row < height {
                for column in 0..<image.width where x + column >= 0 && x + column < width {
                    for c in 0..<3 { d[(y + row) * dp.bytesPerRow + (x + column) * 3 + c] = s[row * sp.bytesPerRow + column * 3 + c] }
                }
            }
        }
    }
}

func astronautVideo(
    _ positions: [(Int, Int)?], pan: [Int]? = nil, plain: Bool = false
) throws -> (frames: [PixelBuffer], faces: [Rect?]) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    let head = try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200))
    var scene = try PixelBuffer(width: 640 + (pan?.max() ?? 0), height: 360, format: .rgb24)
    if plain {
        scene.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 128) }
    } else {
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
    }
    var frames: [PixelBuffer] = []
    var faces: [Rect?] = []
    for (n, position) in positions.enumerated() {
        var frame = try scene.cropped(to: Rect(x: pan?[n] ?? 0, y: 0, width: 640, height: 360)).copy()
        if let (x, y) = position {
            paste(head, into: &frame, x: x, y: y)
            // The face in the head crop: about x 50…150, y 50…165.
            faces.append(Rect(x: x + 50, y: y + 48, width: 100, height: 115))
        } else {
            faces.append(nil)
        }
        frames.append(try PixelFormatConversion.convert(frame, to: .nv12VideoRange))
    }
    return (frames, faces)
}

/// How many times `regions` (passes in order, nil: the whole frame) looked at all `tiles`
/// distinct tiles back to back, with no whole-frame pass between: a sweep in one job. Tiles
/// taking turns with whole-frame passes count for none.
func backToBackSweeps(_ regions: [Rect?], tiles: Int) -> Int {
    var sweeps = 0
    var run = Set<Rect>()
    for region in regions {
        guard let region, !run.contains(region) else {
            run = region.map { [$0] } ?? []
            continue
        }
        run.insert(region)
        if run.count == tiles {
            sweeps += 1
            run = []
        }
    }
    return sweeps
}

/// A detector that shrinks frames by half (so a tracker plans tiles, six at 720p, and sweeps
/// them) whose whole-frame passes find `faces` where the frame is not plain (a cut to a blank
/// wall: none), and whose tiles find nothing; it notes the region of every pass.
final class SweepCounter: ScriptedPasses {
    let faces: [Face]
    private let log = Mutex<[Rect?]>([])
    init(faces: [Face]) { self.faces = faces }
    /// The sweeps in one job so far (``backToBackSweeps(_:tiles:)``), for 1280x720 frames.
    var sweeps: Int { backToBackSweeps(log.withLock { $0 }, tiles: 6) }
    var wholeFramePasses: Int { log.withLock { $0.filter { $0 == nil }.count } }
    var tilePasses: Int { log.withLock { $0.filter { $0 != nil }.count } }
    var name: String { "sweep-counter" }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        // The quick look (the whole frame at a scale of its own) is not counted.
        if region == nil && scale != nil { return DetectionPass(faces: []) }
        log.withLock { $0.append(region) }
        guard region == nil else { return DetectionPass(faces: []) }
        // A plain frame (a uniform wall) has no face.
        let plain = image.withUnsafeBytes(ofPlane: 0) { bytes, p in
            let row = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + (image.height / 2) * p.bytesPerRow
            return (0..<image.width).allSatisfy { row[$0] == row[0] }
        }
        return DetectionPass(faces: plain ? [] : faces)
    }
    func passScale(width: Int, height: Int) -> Double { 0.5 }
}

/// A 1280x720 NV12 frame: three astronaut heads of 200 px on the coffee photo, and their faces.
func threeFaceScene() throws -> (frame: PixelBuffer, faces: [Rect]) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    let head = try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200))
    var scene = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
    let xs = [100, 540, 980]
    for x in xs { paste(head, into: &scene, x: x, y: 260) }
    return (
        try PixelFormatConversion.convert(scene, to: .nv12VideoRange), xs.map { Rect(x: $0 + 50, y: 260 + 48, width: 100, height: 115) }
    )
}

/// A uniform gray 1280x720 NV12 frame: a cut to a blank wall.
func grayWall() throws -> PixelBuffer {
    var blank = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    blank.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 128) }
    return try PixelFormatConversion.convert(blank, to: .nv12VideoRange)
}

/// A 1280x720 NV12 frame: the astronaut's head shrunk to 52 px (her face, `truth`, ~26 px)
/// on the coffee photo; and the photo alone.
func smallFaceScene() throws -> (withFace: PixelBuffer, empty: PixelBuffer, truth: Rect) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    var head = try PixelBuffer(width: 52, height: 52, format: .rgb24)
    try Resize.bilinear(try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200)).copy(), into: &head)
    var empty = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &empty)
    var scene = empty.copy()
    paste(head, into: &scene, x: 700, y: 400)
    return (
        try PixelFormatConversion.convert(scene, to: .nv12VideoRange), try PixelFormatConversion.convert(empty, to: .nv12VideoRange),
        Rect(x: 700 + 13, y: 400 + 12, width: 26, height: 30)
    )
}

extension FaceTracker.Options {
    /// The background schedule with passes back to back whatever the scene (tests of the
    /// scheduler and the budget: their detectors find nothing, a quiet scene).
    static var backToBack: Self {
        var options = Self(schedule: .background)
        options.quietInterval = 1
        return options
    }
}

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
        "the first background pass starts with the detector's quick look: its faces are reported while the pass is still running, and the pass's faces join the same tracks (once each); not again after, again after reset()"
    )
    func quickFirstLook() throws {
        let video = try astronautVideo(Array(repeating: (100, 80), count: 60))
        let large = Face(bounds: video.faces[0]!, confidence: 0.9)
        // The pass's box for the same face, 40 px aside: IoU 0.43 with the look's, enough to
        // renew its track (0.3) and too little for two tracks on it to count as one (0.5), so
        // only matching the look's track where it was in the pass's frame keeps one track.
        var moved = large
        moved.bounds.x += 40
        let small = Face(bounds: Rect(x: 420, y: 220, width: 40, height: 44), confidence: 0.8) // on the coffee photo's texture
        let detector = QuickLookDetector(quick: [large], full: [moved, small])
        var options = FaceTracker.Options(schedule: .background)
        options.tiles = false
        let tracker = try FaceTracker(detector: detector, options: options)
        defer {
            detector.open()
            tracker.waitUntilIdle()
        }
        var frames = video.frames.makeIterator()
        func next() throws -> [Rect] { try tracker.faces(in: frames.next()!).map(\.bounds) }
        #expect(try next().isEmpty, "frame 1: nothing known yet")
        // The quick look's face arrives while the pass is held: the lane has given the look's
        // result before it begins the pass.
        try #require(detector.passBegan.wait(timeout: .now() + 60) == .success)
        let seen = try next()
        #expect(seen.count == 1 && seen[0].iou(large.bounds) > 0.8, "\(seen)")
        #expect(detector.passes == 0 && detector.quickLooks == 1)
        // The pass, on the same frame, finds both faces: the large one renews the quick look's track.
        detector.release()
        tracker.waitUntilIdle()
        let both = try next()
        #expect(both.count == 2, "\(both)")
        #expect(both.contains { $0.iou(moved.bounds) > 0.8 } && both.contains { $0.iou(small.bounds) > 0.8 }, "\(both)")
        #expect(tracker.statistics.passes == 2, "the quick look and the pass: \(tracker.statistics)")
        detector.open()
        for _ in 0..<5 { _ = try next() }
        tracker.waitUntilIdle()
        #expect(detector.quickLooks == 1, "the quick look is for the first pass only")
        tracker.reset()
        _ = try next()
        tracker.waitUntilIdle()
        #expect(detector.quickLooks == 2, "a reset starts with a quick look again")

        // Off: the first faces are the pass's.
        options.quickFirstLook = false
        let off = QuickLookDetector(quick: [large], full: [moved, small])
        let plain = try FaceTracker(detector: off, options: options)
        _ = try plain.faces(in: video.frames[0])
        off.release()
        plain.waitUntilIdle()
        #expect(try plain.faces(in: video.frames[1]).count == 2)
        #expect(off.quickLooks == 0)
        off.open()
        plain.waitUntilIdle()
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
        let before = detector.wholeFramePasses
        // The cut (frame 41), and 13 frames of the new scene: the sweep again.
        #expect(try feed(wall, frames: 10).isEmpty)
        tracker.waitUntilIdle()
        _ = try feed(wall, frames: 3)
        tracker.waitUntilIdle()
        #expect(detector.sweeps == (cutsFromImage ? 1 : 0), "every tile back to back after the cut")
        #expect(detector.wholeFramePasses > before, "a whole-frame pass after it")
        // Back to the faces and away again (frame 61): each scene is new and is swept.
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

    @Test("with the Haar cascade too")
    func haar() throws {
        let video = try astronautVideo((0..<6).map { (100 + $0 * 10, 100) })
        let tracker = try FaceTracker(detector: try HaarFaceDetector(options: .init(minFaceSize: 60)))
        let counts = try video.frames.map { try tracker.faces(in: $0).count }
        let direct = try HaarFaceDetector(options: .init(minFaceSize: 60)).detect(in: video.frames[0]).map(\.bounds)
        #expect(counts.allSatisfy { $0 == 1 }, "\(counts) \(direct)")
    }

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

    @Test(
        "trackers sharing a PassScheduler take turns: never more passes at once than its lanes, and with one lane each source's pass in turn, round robin"
    )
    func sharedScheduler() throws {
        for lanes in [1, 2] {
            let overlap = PassOverlap()
            let log = TurnLog()
            let scheduler = PassScheduler(lanes: lanes)
            let detectors = (0..<3).map { TurnDetector(id: $0, overlap: overlap, turns: log) }
            let trackers = try detectors.map { try FaceTracker(detector: $0, options: .backToBack, scheduler: scheduler) }
            let frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
            // Every camera wants a pass at once; then, as each pass ends, its camera's next frame
            // asks for the next (a camera faster than the passes).
            for tracker in trackers { _ = try tracker.faces(in: frame) }
            var ended = 0
            while ended < 12 {
                try #require(log.began.wait(timeout: .now() + 60) == .success, "a pass began: \(log.turns)")
                let id = log.turns[ended]
                detectors[id].release()
                trackers[id].waitUntilIdle()
                _ = try trackers[id].faces(in: frame)
                ended += 1
            }
            // Every gate opened before any tracker waits for its passes.
            for detector in detectors { detector.release() }
            for tracker in trackers { tracker.shutdown() }
            #expect(overlap.most <= lanes, "\(overlap.most) passes at once with \(lanes) lane(s)")
            #expect(Set(log.turns.prefix(12)) == [0, 1, 2], "every source had passes: \(log.turns)")
            if lanes == 1 {
                #expect(Array(log.turns.prefix(12)) == Array(repeating: [0, 1, 2], count: 4).flatMap { $0 }, "\(log.turns)")
            }
        }
    }

    /// A process CPU clock a test moves by hand.
    final class FakeCPU: Sendable {
        let spent = Mutex<Duration>(.zero)
        func spend(_ d: Duration) { spent.withLock { $0 += d } }
    }

    /// A detector whose every pass spends `cost` of `cpu` (no wall time) and notes how many
    /// frames old its frame is: the frame's first pixel is its number, `newest` the newest's.
    final class CPUCostDetector: FaceDetecting {
        let cpu: FakeCPU
        let cost: Duration
        let newest = Mutex(0)
        let ages = Mutex<[Int]>([])
        init(cpu: FakeCPU, cost: Duration) { (self.cpu, self.cost) = (cpu, cost) }
        var name: String { "cost" }
        var modelURL: URL { URL(fileURLWithPath: "/") }
        func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
            -> DetectionPass
        {
            let stamp = image.withUnsafeBytes(ofPlane: 0) { bytes, _ in Int(bytes[0]) }
            let now = newest.withLock { $0 }
            ages.withLock { $0.append((now - stamp + 256) % 256) }
            cpu.spend(cost)
            return DetectionPass(faces: [])
        }
    }

    /// A scheduler at half a core whose process is always far over it (5 s of other work at
    /// every look): passes go only after `longestWait`.
    func overBudget(longestWait: Duration, wall: FakeClock) -> PassScheduler {
        let busy = FakeCPU()
        return PassScheduler(
            lanes: 1,
            budget: CPUBudget(
                cores: 0.5, longestWait: longestWait,
                cpuTime: {
                    busy.spend(.seconds(5))
                    return busy.spent.withLock { $0 }
                }, wallTime: wall.now))
    }

    /// Feeds a background tracker on `scheduler` a frame every 10 ms of `wall` for `seconds`,
    /// each pass spending `cost` of `cpu` and ending before the next frame: its statistics, the
    /// wall time, and how many frames old each pass's frame was when the pass began.
    func runTracker(on scheduler: PassScheduler, wall: FakeClock, cpu: FakeCPU, cost: Duration, seconds: Double) throws -> (
        PassStatistics, Double, [Int]
    ) {
        let detector = CPUCostDetector(cpu: cpu, cost: cost)
        let tracker = try FaceTracker(detector: detector, options: .backToBack, scheduler: scheduler, policy: .standard, clock: wall.now)
        var frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
        let start = wall.now()
        var n = 0
        while (wall.now() - start).seconds < seconds {
            n += 1
            detector.newest.withLock { $0 = n % 256 }
            frame.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in bytes[0] = UInt8(n % 256) }
            _ = try tracker.faces(in: frame)
            tracker.waitUntilIdle()
            wall.advance(.milliseconds(10))
        }
        return (tracker.statistics, (wall.now() - start).seconds, detector.ages.withLock { $0 })
    }

    @Test(
        "a CPU budget holds passes back: at half a core, passes of 0.1 s of CPU spend at most the budget over the run (plus its one-second credit), wait for it, and each runs on the frame of its moment; with none they run on every frame"
    )
    func cpuBudget() throws {
        let cpu = FakeCPU()
        let clock = FakeClock()
        let budgeted = PassScheduler(
            lanes: 1,
            budget: CPUBudget(cores: 0.5, longestWait: .seconds(10), cpuTime: { cpu.spent.withLock { $0 } }, wallTime: clock.now))
        let (stats, wall, ages) = try runTracker(on: budgeted, wall: clock, cpu: cpu, cost: .milliseconds(100), seconds: 2)
        let spent = cpu.spent.withLock { $0 }.seconds
        // The credit (0.5 s) lets the first passes through at once; after that a pass of 0.1 s
        // comes every 0.2 s. Spent: at most the credit, the budget's rate (over the run and the
        // tracker's making) and one pass over.
        #expect(spent <= 0.5 + 0.5 * (wall + 0.1) + 0.1 && spent >= 0.5 + 0.25 * wall, "\(spent) s in \(wall) s")
        #expect(stats.budgetWaitSeconds >= 0.25 * wall, "\(stats.budgetWaitSeconds)")
        // Held back before the frame is taken, never after: a pass's frame is the newest one (a
        // pass that waited with its frame would be about 20 frames behind).
        #expect(!ages.isEmpty && ages.allSatisfy { $0 == 0 }, "\(ages)")
        let free = FakeCPU()
        let (freeStats, _, _) = try runTracker(
            on: PassScheduler(lanes: 1), wall: FakeClock(), cpu: free, cost: .milliseconds(100), seconds: 0.5)
        #expect(freeStats.budgetWaitSeconds == 0 && freeStats.passes >= 49, "a pass on every frame: \(freeStats)")
        // When the rest of the process alone is over the budget, a pass still goes after the
        // longest wait: found late, never starved.
        let starvedClock = FakeClock()
        let starved = overBudget(longestWait: .milliseconds(200), wall: starvedClock)
        let (starvedStats, starvedWall, _) = try runTracker(on: starved, wall: starvedClock, cpu: FakeCPU(), cost: .zero, seconds: 1)
        let waitsEnded = starvedStats.passes
        #expect(waitsEnded >= 2 && Double(waitsEnded) <= starvedWall / 0.2 + 1, "\(starvedStats.passes) in \(starvedWall) s")
        #expect(starvedStats.budgetWaitSeconds >= 0.2 * Double(waitsEnded - 1), "\(starvedStats.budgetWaitSeconds)")
    }

    @Test(
        "the budget's credit: passes admitted and not finished count at their estimate, so trackers sharing it are not all let through on one credit; a debt is at most the longest wait's budget"
    )
    func budgetCredit() throws {
        let cpu = FakeCPU()
        let clock = FakeClock()
        let budget = CPUBudget(cores: 1, longestWait: .milliseconds(200), cpuTime: { cpu.spent.withLock { $0 } }, wallTime: clock.now)
        // A credit of one second's budget (1 s; never more, however long the test is held up):
        // two passes expected to take 0.6 s each get through on it, a third not until one ends.
        #expect(budget.admit(estimate: 0.6) && budget.admit(estimate: 0.6))
        #expect(!budget.admit(estimate: 0.6))
        budget.release(0.6)
        #expect(budget.admit(estimate: 0.6))
        budget.release(0.6)
        budget.release(0.6)
        // 100 s of other work: a debt of at most 0.2 s (the longest wait's budget), paid in 0.2 s.
        cpu.spend(.seconds(100))
        #expect(!budget.admit(estimate: 0))
        clock.advance(.milliseconds(300))
        #expect(budget.admit(estimate: 0), "a burst of other work is forgotten once the longest wait has passed")
    }

    @Test("a sweep's job's CPU is not what the next pass is expected to cost: the next admission sets a typical pass's aside")
    func sweepNotTheEstimate() throws {
        let lane = FakeCPU()
        // Lanes run on the test's thread as they start: each pass has ended when run() returns.
        let scheduler = PassScheduler(
            lanes: 1, budget: CPUBudget(cores: 100, cpuTime: { .zero }), passCPU: { lane.spent.withLock { $0 } },
            startLane: { $0() })
        func pass(costing cost: Duration, typical: Bool) throws {
            let admission = try #require(scheduler.admit(waitingSince: .now, now: .now))
            let done = Mutex(false)
            scheduler.run(admission, typical: typical, { lane.spend(cost) }, done: { done.withLock { $0 = true } })
            #expect(done.withLock { $0 })
        }
        try pass(costing: .milliseconds(100), typical: true)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.1)
        try pass(costing: .milliseconds(900), typical: false)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.1, "not the sweep's 0.9 s")
        try pass(costing: .milliseconds(200), typical: true)
        #expect(scheduler.admit(waitingSince: .now, now: .now)?.reserved == 0.2)
    }

    @Test("a pass the budget is holding back counts in budgetWaitSeconds while it is held, not only once it starts")
    func openHoldCounted() throws {
        let clock = FakeClock()
        let tracker = try FaceTracker(
            detector: CPUCostDetector(cpu: FakeCPU(), cost: .zero), options: .backToBack,
            scheduler: overBudget(longestWait: .seconds(60), wall: clock), policy: .standard, clock: clock.now)
        let frame = try PixelBuffer(width: 64, height: 48, format: .gray8)
        for _ in 0..<50 {
            _ = try tracker.faces(in: frame)
            clock.advance(.milliseconds(10))
        }
        let statistics = tracker.statistics
        // Held from the first frame to now (the last frame, and 10 ms since).
        #expect(statistics.passes == 0 && statistics.budgetWaitSeconds == 0.5, "\(statistics)")
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
