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

/// A detector that notes the region of every pass (nil: the whole frame);
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
        log.withLock { $0.append(region) }
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

/// Where a test double's passes are held until the test lets each one through, or all of them.
final class PassHold: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Mutex(false)
    /// Waits for the test, unless the gate is open.
    func pass() { if !isOpen.withLock({ $0 }) { semaphore.wait() } }
    /// Lets one waiting (or the next) pass through.
    func release() { semaphore.signal() }
    /// Lets every pass through from now on.
    func open() {
        isOpen.withLock { $0 = true }
        semaphore.signal()
    }
}

/// A detector whose passes wait until the test lets each one through: a pass as slow as the
/// test wants, with no clock involved.
final class GatedDetector: FaceDetecting {
    let inner: any FaceDetecting
    private let gate = PassHold()
    init(_ inner: any FaceDetecting) { self.inner = inner }
    var name: String { inner.name }
    var modelURL: URL { inner.modelURL }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        gate.pass()
        return try inner.pass(in: image, region: region, scale: scale, candidatesDownTo: floor)
    }
    func release() { gate.release() }
    func open() { gate.open() }
}

/// A detector that shrinks frames by half (so a tracker plans tiles, six at 720p, and sweeps
/// them) whose whole-frame passes find `faces` where the frame is not plain (a cut to a blank
/// wall: none), and whose tiles find nothing; it notes the region of every pass.
final class SweepCounter: ScriptedPasses {
    let faces: [Face]
    private let log = Mutex<[Rect?]>([])
    init(faces: [Face]) { self.faces = faces }
    /// The sweeps in one job so far (``backToBackSweeps(_:tiles:)``), for 1280x720 frames.
    var sweeps: Int { backToBackSweeps(regions, tiles: 6) }
    /// The regions of the passes so far, in order (nil: the whole frame).
    var regions: [Rect?] { log.withLock { $0 } }
    var wholeFramePasses: Int { regions.filter { $0 == nil }.count }
    var tilePasses: Int { regions.filter { $0 != nil }.count }
    var name: String { "sweep-counter" }
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
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
