import FrameCore
import Synchronization

/// Real-time face detection on video: faces found once are searched for only near where they
/// were (a small region, at a scale where the face is ~40 px, for faces of about the same
/// size), and the whole frame is scanned at low resolution every few frames to find new ones.
/// At 720p this costs a few milliseconds per frame instead of a full detectMultiScale.
///
/// Frames must be given in order; one tracker follows one video.
public final class FaceTracker: Sendable {
    public struct Options: Sendable, Equatable {
        /// Full scans run on the frame shrunk to this width (area resize).
        public var scanWidth: Int = 480
        /// A full scan every this many frames (and on every frame while nothing is tracked).
        public var scanInterval: Int = 5
        /// The smallest face a full scan looks for, as a fraction of the frame height.
        public var minFaceFraction: Double = 0.1
        /// The size (px) a tracked face is shrunk to for its local search.
        public var trackedFaceSize: Double = 40
        /// Frames a track may go unconfirmed before it is dropped; while unconfirmed it is
        /// reported where it was last seen.
        public var maxMisses: Int = 2
        public var scanNeighbors: Int = 3
        public var trackNeighbors: Int = 2

        public init() {}
    }

    private struct Track {
        var bounds: Rect
        var misses: Int
    }

    private struct State {
        var tracks: [Track] = []
        var frame = 0
    }

    public let options: Options
    public let detector: FaceDetector
    private let state = Mutex(State())

    public init(detector: FaceDetector, options: Options = Options()) {
        precondition(options.scanInterval >= 1 && options.scanWidth >= 48, "invalid tracker options")
        self.detector = detector
        self.options = options
    }

    /// The faces in the next frame of the video.
    public func faces(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        var s = state.withLock { $0 }
        s.frame += 1
        let w = image.width, h = image.height

        // 1. Each known face, searched for near where it was.
        for i in s.tracks.indices {
            let t = s.tracks[i].bounds
            let roi = Rect(x: t.x - t.width / 2, y: t.y - t.height / 2, width: t.width * 2, height: t.height * 2).clamped(width: w, height: h)
            var local = FaceDetector.Options(scaleFactor: 1.1, minNeighbors: options.trackNeighbors,
                                             minFaceSize: Int(Double(t.width) * 0.7), maxFaceSize: Int(Double(t.width) * 1.45))
            local.detectionScale = min(1, options.trackedFaceSize / Double(max(1, t.width)))
            let found = try detector.detect(in: image, region: roi, options: local)
            if let best = found.max(by: { $0.bounds.iou(t) < $1.bounds.iou(t) }), best.bounds.iou(t) > 0.2 {
                s.tracks[i] = Track(bounds: best.bounds, misses: 0)
            } else {
                s.tracks[i].misses += 1
            }
        }

        // 2. A low-resolution scan of the whole frame for faces not yet tracked — also whenever a
        //    tracked face was not found near where it was (it jumped, or the camera moved).
        let lost = s.tracks.contains { $0.misses > 0 }
        let scanned = s.tracks.isEmpty || lost || s.frame % options.scanInterval == 0
        if scanned {
            var scan = FaceDetector.Options(scaleFactor: 1.2, minNeighbors: options.scanNeighbors,
                                            minFaceSize: Int(Double(h) * options.minFaceFraction))
            scan.detectionScale = min(1, Double(options.scanWidth) / Double(w))
            for face in try detector.detect(in: image, region: nil, options: scan) {
                if let i = s.tracks.indices.max(by: { s.tracks[$0].bounds.iou(face.bounds) < s.tracks[$1].bounds.iou(face.bounds) }),
                   s.tracks[i].bounds.iou(face.bounds) > 0.3 {
                    if s.tracks[i].misses > 0 { s.tracks[i] = Track(bounds: face.bounds, misses: 0) }
                } else {
                    s.tracks.append(Track(bounds: face.bounds, misses: 0))
                }
            }
        }

        // 3. Forget lost faces and merge tracks that converged on one face.
        s.tracks.removeAll { $0.misses > options.maxMisses }
        var kept: [Track] = []
        for t in s.tracks where !kept.contains(where: { $0.bounds.iou(t.bounds) > 0.5 }) { kept.append(t) }
        // A face missed by its local search is reported where it was last seen (one frame of
        // grace), unless a full scan of this very frame did not find it either.
        let reported = kept.filter { $0.misses == 0 || ($0.misses == 1 && !scanned) }
        s.tracks = kept
        state.withLock { $0 = s }
        return reported.map { Face(bounds: $0.bounds) }
    }

    /// Forgets every track (a new video, a camera switch).
    public func reset() { state.withLock { $0 = State() } }
}

/// Face tracking as a chain stage: `frame.faces` from a ``FaceTracker``.
public struct FaceTrackingProcessor: Processor {
    public let tracker: FaceTracker
    public var name: String { "detect" }
    public init(tracker: FaceTracker) { self.tracker = tracker }
    public func process(_ frame: inout SampleBuffer) throws {
        frame.faces = try tracker.faces(in: frame.pixelBuffer)
    }
}
