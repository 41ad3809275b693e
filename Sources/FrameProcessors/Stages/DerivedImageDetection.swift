import FrameCore

/// Detection on a derived image — the frame shrunk, turned gray, cropped — while the frame
/// itself goes on unchanged: `derive` runs on a view of the frame, `detect` on the result, and
/// the faces are mapped back into the frame's own coordinates.
///
/// ```swift
/// output.processors = ProcessorChain([
///     DerivedImageDetection(derive: [try ResizeStage(width: 640, height: 360)],
///                           detect: FaceDetectionProcessor(detector: try FaceDetector()))
/// ])  // the delegate gets the full-resolution colour frame, faces in its coordinates
/// ```
public struct DerivedImageDetection: Processor {
    public let derive: [any Processor]
    public let detect: any Processor
    public var name: String { detect.name }

    public init(derive: [any Processor], detect: any Processor) {
        self.derive = derive
        self.detect = detect
    }

    public func process(_ frame: inout SampleBuffer) throws {
        var derived = frame
        derived.faces = []
        var map = PointMap.identity
        for stage in derive {
            let (w, h) = (derived.pixelBuffer.width, derived.pixelBuffer.height)
            if let geometric = stage as? any GeometricProcessor { map = map.then(geometric.pointMap(width: w, height: h)) }
            try stage.process(&derived)
        }
        try detect.process(&derived)
        guard let back = map.inverse else {
            throw PixelBufferError.unsupportedFormat(frame.pixelBuffer.format, operation: "mapping faces back")
        }
        frame.faces = derived.faces.map { $0.mapped(by: back) }
    }
}
