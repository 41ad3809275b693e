import FrameCore

// Chain stages over the filters. Each keeps its output buffer between frames (ScratchBuffer).
// Filters that need gray take the frame's luma first (free for NV12/I420: it is plane 0).

/// Converts frames to `format` (gray, RGB, BGRA, or any Y'CbCr layout).
public struct ConvertStage: ImageStage {
    public let format: PixelFormat
    public let matrix: ColorConversion.Matrix
    let scratch = ScratchBuffer()
    public var name: String { "convert-\(format.shortName)" }
    public init(to format: PixelFormat, matrix: ColorConversion.Matrix = .bt601) {
        self.format = format
        self.matrix = matrix
    }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, format)
    }
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        switch format {
        case .rgb24, .bgra32, .gray8: try ColorConversion.convert(input, into: &output, matrix: matrix)
        default: try PlanarYCbCr(reading: input).write(into: &output)
        }
    }
}

/// Resizes frames to a fixed size: area averaging (down-scaling, gray) or bilinear.
public struct ResizeStage: ImageStage {
    public enum Method: String, Sendable { case area, bilinear }
    public let width: Int, height: Int, method: Method
    let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String { "resize" }
    /// A size that is not positive is ``PixelBufferError/invalidSize(width:height:format:)``.
    public init(width: Int, height: Int, method: Method = .area) throws(PixelBufferError) {
        guard width > 0, height > 0 else { throw .invalidSize(width: width, height: height, format: .gray8) }
        self.width = width
        self.height = height
        self.method = method
    }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        let format: PixelFormat = method == .bilinear && (input.format == .rgb24 || input.format == .bgra32) ? input.format : .gray8
        return (width, height, format)
    }
    public func pointMap(width inputWidth: Int, height inputHeight: Int) -> PointMap {
        .scale(Double(width) / Double(inputWidth), Double(height) / Double(inputHeight))
    }
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        if method == .bilinear && output.format != .gray8 { return try Resize.bilinear(input, into: &output) }
        let source = try gray.luma(of: input)
        if method == .area { try Resize.area(source, into: &output) } else { try Resize.bilinear(source, into: &output) }
    }
}

/// Box or Gaussian blur of the frame's gray image.
public struct BlurStage: ImageStage {
    public enum Kind: String, Sendable { case box, gaussian }
    public let kind: Kind, size: Filters.KernelSize
    let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String { "\(kind.rawValue)-blur-\(size.rawValue)" }
    public init(_ kind: Kind, size: Filters.KernelSize) {
        self.kind = kind
        self.size = size
    }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, .gray8)
    }
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        let source = try gray.luma(of: input)
        if kind == .box { try Filters.boxBlur(source, into: &output, size: size) } else { try Filters.gaussianBlur(source, into: &output, size: size) }
    }
}

/// Sobel edge magnitude, a binary threshold, or histogram equalisation of the gray image.
public struct GrayFilterStage: ImageStage {
    public enum Operation: Sendable, Equatable {
        case sobelMagnitude
        case threshold(UInt8, maxValue: UInt8)
        case equalizeHistogram
    }
    public let operation: Operation
    let scratch = ScratchBuffer()
    let gray = GrayInput()
    public var name: String {
        switch operation {
        case .sobelMagnitude: "sobel"
        case .threshold: "threshold"
        case .equalizeHistogram: "equalize"
        }
    }
    public init(_ operation: Operation) { self.operation = operation }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        (input.width, input.height, .gray8)
    }
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        let source = try gray.luma(of: input)
        switch operation {
        case .sobelMagnitude: try Filters.sobelMagnitude(source, into: &output)
        case let .threshold(t, maxValue): try Filters.threshold(source, into: &output, threshold: t, maxValue: maxValue)
        case .equalizeHistogram: try Filters.equalizeHistogram(source, into: &output)
        }
    }
}

/// Rotation by quarter turns and mirroring (what a capture connection applies).
public struct TransformStage: ImageStage {
    public let rotation: Transform.Rotation, mirrored: Bool
    let scratch = ScratchBuffer()
    public var name: String { "transform" }
    public init(rotation: Transform.Rotation, mirrored: Bool = false) {
        self.rotation = rotation
        self.mirrored = mirrored
    }
    func outputShape(for input: PixelBuffer) throws(PixelBufferError) -> (width: Int, height: Int, format: PixelFormat) {
        try Transform.requireSupport(input.format, rotation: rotation) // before a buffer of that shape is made
        let size = Transform.size(width: input.width, height: input.height, rotation: rotation)
        return (size.width, size.height, input.format)
    }
    public func pointMap(width: Int, height: Int) -> PointMap {
        Transform.pointMap(width: width, height: height, rotation: rotation, mirrored: mirrored)
    }
    func render(_ input: PixelBuffer, into output: inout PixelBuffer) throws(PixelBufferError) {
        try Transform.apply(input, rotation: rotation, mirrored: mirrored, into: &output)
    }
}

/// Keeps only `region` of each frame (zero copy). Faces already on the frame move into the
/// crop's coordinates (cut to it; those wholly outside are dropped).
public struct CropStage: GeometricProcessor {
    public let region: Rect
    public var name: String { "crop" }
    public init(_ region: Rect) { self.region = region }
    public func process(_ frame: inout SampleBuffer) throws {
        let cropped = try frame.pixelBuffer.cropped(to: region)
        let map = pointMap(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
        frame.faces = frame.faces.compactMap { face in
            var moved = face.mapped(by: map)
            moved.bounds = moved.bounds.clamped(width: region.width, height: region.height)
            return moved.bounds.area > 0 ? moved : nil
        }
        frame.pixelBuffer = cropped
    }
    public func pointMap(width: Int, height: Int) -> PointMap { .translation(-Double(region.x), -Double(region.y)) }
}

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
        guard let back = map.inverse else { throw PixelBufferError.unsupportedFormat(frame.pixelBuffer.format, operation: "mapping faces back") }
        frame.faces = derived.faces.map { $0.mapped(by: back) }
    }
}

/// The gray view of a frame: the luma plane itself for GRAY8, NV12 and I420 (no work), else a
/// conversion into a reused buffer.
final class GrayInput: Sendable {
    let scratch = ScratchBuffer()
    func luma(of input: PixelBuffer) throws(PixelBufferError) -> PixelBuffer {
        switch input.format {
        case .gray8: return input
        case .nv12VideoRange, .nv12FullRange, .i420:
            return try input.lumaPlane()
        default:
            var gray = try scratch.take(width: input.width, height: input.height, format: .gray8)
            try ColorConversion.convertToGray(input, into: &gray)
            scratch.keep(gray)
            return gray
        }
    }
}
