import FrameCore

/// What a pass looked at.
enum PassLook: Equatable {
    /// A tile, or the whole frame (nil), at the detector's own scale.
    case region(Rect?)
    /// A strip along the edge a panning camera brings into view, shrunk by `scale` (the
    /// tiles'): judged as a tile is (``LookPlanner/enteringEdge(gap:pan:)``).
    case edge(Rect, scale: Double)

    var isEdge: Bool { if case .edge = self { true } else { false } }

    /// Runs this look's pass with `detector`. `closer`: a tile's pass takes closer looks at
    /// its weak small boxes.
    func run(_ detector: any FaceDetecting, on image: PixelBuffer, candidatesDownTo floor: Double, closer: CloserLooks? = nil)
        throws(FaceDetectorError)
        -> DetectionPass
    {
        switch (self, closer) {
        case (.region(let region), let closer?): try closer.pass(detector, on: image, region: region, candidatesDownTo: floor)
        case (.region(let region), _): try detector.pass(in: image, region: region, candidatesDownTo: floor)
        case (.edge(let strip, let scale), _): try detector.pass(in: image, region: strip, scale: scale, candidatesDownTo: floor)
        }
    }
}

/// A finished pass: the frame it ran on, what it looked at, its boxes, and how long it took.
struct PassResult {
    var frame: Int
    var look: PassLook
    var pass: DetectionPass
    var latency: Duration
    /// The last tile of a sweep's job (``FaceTracker/Options/sweepAtOnce``): every tile has
    /// been looked at.
    var endsSweep = false
}
