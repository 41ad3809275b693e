import CXNNPack
import Foundation
import FrameCore
import FrameModels

/// Finds faces with CenterFace, a CNN (Models/centerface.onnx), run by XNNPACK through
/// CXNNPack (which reads the ONNX file itself). The network's input is made here from any pixel
/// format (FrameKit's own conversion and bilinear resize into reused buffers); its heatmap is
/// decoded and the boxes suppressed here too. Gives each face a confidence and five landmarks.
///
/// Thread-safe, and calls run in parallel, at most one per CPU the process may use (a call
/// beyond waits for one to end): every detector of the process that loads the same model file
/// shares one copy of it, and each call borrows a network and buffers of its own from it (a
/// fleet holds what its passes ran at once, not a set per camera).
public final class FaceDetector: FaceDetecting {
    public struct Options: Sendable, Equatable {
        /// The longest side of the network's input, in pixels: the image (or region) is shrunk
        /// to fit, never enlarged, and padded to multiples of 32. Faces smaller than about 12 px
        /// at that size are missed, so 640 finds faces from about 24 px up in a 1280x720 frame.
        public var inputSize: Int = 640
        /// The lowest heatmap score reported as a face (0…1); chosen on the corpus's tune split.
        public var scoreThreshold: Double = 0.3
        /// Boxes overlapping a stronger one by this IoU or more are dropped.
        public var overlapThreshold: Double = 0.3
        /// Smallest and largest face side, in the image's pixels (nil: no limit).
        public var minFaceSize: Int? = nil
        public var maxFaceSize: Int? = nil

        public init(
            inputSize: Int = 640, scoreThreshold: Double = 0.3, overlapThreshold: Double = 0.3,
            minFaceSize: Int? = nil, maxFaceSize: Int? = nil
        ) {
            self.inputSize = inputSize
            self.scoreThreshold = scoreThreshold
            self.overlapThreshold = overlapThreshold
            self.minFaceSize = minFaceSize
            self.maxFaceSize = maxFaceSize
        }

        func validate() throws(FaceDetectorError) {
            guard inputSize >= 32, inputSize <= 4096 else { throw .invalidOptions("inputSize must be in 32…4096, got \(inputSize)") }
            guard scoreThreshold >= 0, scoreThreshold <= 1 else {
                throw .invalidOptions("scoreThreshold must be in 0…1, got \(scoreThreshold)")
            }
            guard overlapThreshold > 0, overlapThreshold <= 1 else { throw .invalidOptions("overlapThreshold must be in (0, 1]") }
            try checkFaceSizes(min: minFaceSize, max: maxFaceSize)
        }
    }

    public let options: Options
    public let modelURL: URL
    public var name: String { "cnn" }

    // The model, shared with every detector of the process that loaded the same file; each
    // call borrows a network and a workspace from it.
    package let model: CenterFaceModel

    /// Loads the default model (found along `ModelCatalog`'s search path, and refused unless its
    /// SHA-256 is the shipped file's) or the ONNX file at `modelURL`: another CenterFace export
    /// (one input of 3 channels; outputs heatmap, box scale, offset and landmarks, in that
    /// order). A file of another form is ``FaceDetectorError/modelLoadFailed(path:message:)``
    /// saying what does not fit.
    public init(modelURL: URL? = nil, options: Options = Options()) throws(FaceDetectorError) {
        try options.validate()
        let (url, shipped) = try modelFile(modelURL, named: ModelCatalog.defaultFaceModel)
        // Read now (unless already loaded), so that a bad file fails here rather than at the first frame.
        self.model = try CenterFaceModel.shared(path: url.path, shippedAs: shipped ? ModelCatalog.defaultFaceModel : nil)
        self.options = options
        self.modelURL = url
    }

    /// Runs the network once on a blank frame of this size: a network is set up for an input
    /// size on its first pass (XNNPACK packs the weights and plans the buffers), which would
    /// otherwise fall on the first frame.
    public func prepare(width: Int, height: Int) throws(FaceDetectorError) {
        _ = try detect(in: try blankFrame(width: width, height: height))
    }

    /// One network run for both: the boxes down to `floor`, suppressed together (a weak box
    /// never outranks a face, so ``DetectionPass/faces`` is exactly what ``detect(in:region:)``
    /// gives), split at ``Options/scoreThreshold``. `scale`: the region's longest side at the
    /// network's input is that side times `scale` (at most 2, and at most twice
    /// ``Options/inputSize``; at least 32 px); above 1 the region is enlarged (a tracker's
    /// closer look at a small weak box). nil: the network's input is at most
    /// ``Options/inputSize`` on its longest side.
    public func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        guard let scale else { return try pass(in: image, region: region, candidatesDownTo: floor, options: options) }
        var call = options
        let area = region ?? Rect(x: 0, y: 0, width: image.width, height: image.height)
        let longest = Double(max(area.width, area.height))
        let scaled = min(2, scale)
        call.inputSize = max(32, min(4096, 2 * options.inputSize, Int((longest * scaled).rounded())))
        return try pass(in: image, region: region, candidatesDownTo: floor, options: call, enlarging: scaled > 1)
    }

    /// A pass with `call` for this network run, split at this detector's own threshold.
    private func pass(
        in image: PixelBuffer, region: Rect?, candidatesDownTo floor: Double, options call: Options, enlarging: Bool = false
    ) throws(FaceDetectorError) -> DetectionPass {
        guard floor < options.scoreThreshold else {
            return DetectionPass(faces: try detect(in: image, region: region, options: call, enlarging: enlarging))
        }
        var call = call
        call.scoreThreshold = max(0, floor)
        return DetectionPass(
            splitting: try detect(in: image, region: region, options: call, enlarging: enlarging), threshold: options.scoreThreshold)
    }

    /// The network's input is at most ``Options/inputSize`` on its longest side.
    public func passScale(width: Int, height: Int) -> Double {
        min(1, Double(options.inputSize) / Double(max(1, width, height)))
    }

    /// As ``detect(in:region:)`` with other options for this call.
    public func detect(in image: PixelBuffer, region: Rect?, options call: Options) throws(FaceDetectorError) -> [Face] {
        try detect(in: image, region: region, options: call, enlarging: false)
    }

    /// `enlarging`: a region smaller than `call`'s input size is enlarged to it.
    private func detect(in image: PixelBuffer, region: Rect?, options call: Options, enlarging: Bool) throws(FaceDetectorError) -> [Face] {
        try call.validate()
        let area = detectionArea(region, in: image)
        guard area.width >= 16, area.height >= 16 else { return [] }
        return try model.withWorkspace { (workspace) throws(FaceDetectorError) -> [Face] in
            try mappingDetectorErrors {
                let input = try workspace.prepareInput(image.cropped(to: area), longestSide: call.inputSize, enlarging: enlarging)
                let faces = try workspace.forward(input, scoreThreshold: Float(call.scoreThreshold), model: model)
                // Network pixels → image pixels.
                let sx = Double(area.width) / Double(input.contentWidth)
                let sy = Double(area.height) / Double(input.contentHeight)
                let minSide = call.minFaceSize ?? 0
                let maxSide = call.maxFaceSize.flatMap { $0 > 0 ? $0 : nil } ?? Int.max
                let mapped = faces.map { $0.mapped(scaleX: sx, scaleY: sy, dx: Double(area.x), dy: Double(area.y)) }
                    .filter { max($0.bounds.width, $0.bounds.height) >= minSide && max($0.bounds.width, $0.bounds.height) <= maxSide }
                return suppressOverlaps(mapped, threshold: call.overlapThreshold)
            }
        }
    }
}

/// The network's input as prepared: `contentWidth` x `contentHeight` pixels of image at the
/// top left of a `width` x `height` interleaved RGB float tensor (NHWC), the rest zero.
struct NetworkInput {
    var width: Int
    var height: Int
    var contentWidth: Int
    var contentHeight: Int
}

/// The buffers one call uses, kept between calls (a ``CenterFaceModel`` lends one to each call).
struct CenterFaceWorkspace: Sendable {
    // The region in RGB24 (when the source is not RGB24) and at the network's scale, a few
    // sizes of each kept (the most recently used last): a tracker's looks alternate between
    // sizes (the whole frame, a tile, an edge strip, a closer look), and a buffer made again
    // at each change was page-faulted in again (the CLI maps every allocation over 64 KB
    // afresh, GlibcMalloc).
    var rgbKept: [PixelBuffer] = []
    var resizedKept: [PixelBuffer] = []
    static let buffersKept = 4
    var tensor: [Float] = [] // [1, H, W, 3] in its first 3·H·W floats; grown, never shrunk
    var heatmap: [Float] = [], boxScale: [Float] = [], offset: [Float] = [], landmarks: [Float] = []

    /// Converts and shrinks `image` into ``tensor`` (or enlarges it, `enlarging`).
    mutating func prepareInput(_ image: PixelBuffer, longestSide: Int, enlarging: Bool = false) throws -> NetworkInput {
        let fit = Double(longestSide) / Double(max(image.width, image.height))
        let scale = enlarging ? fit : min(1, fit)
        let cw = max(1, Int((Double(image.width) * scale).rounded()))
        let ch = max(1, Int((Double(image.height) * scale).rounded()))
        let input = NetworkInput(width: (cw + 31) / 32 * 32, height: (ch + 31) / 32 * 32, contentWidth: cw, contentHeight: ch)

        var source = image
        if image.format != .rgb24 {
            var rgb = try Self.reuse(&rgbKept, width: image.width, height: image.height)
            try ColorConversion.convert(image, into: &rgb)
            source = rgb
            rgbKept.append(rgb)
        }
        if cw != image.width || ch != image.height {
            var resized = try Self.reuse(&resizedKept, width: cw, height: ch)
            try Resize.bilinear(source, into: &resized)
            source = resized
            resizedKept.append(resized)
        }

        let count = 3 * input.width * input.height
        if tensor.count < count { tensor = [Float](repeating: 0, count: count) }
        let rowFloats = 3 * input.width
        let contentFloats = 3 * cw
        source.withUnsafeBytes(ofPlane: 0) { bytes, p in
            tensor.withUnsafeMutableBufferPointer { t in
                for y in 0..<input.height {
                    let out = t.baseAddress! + y * rowFloats
                    guard y < ch else {
                        out.update(repeating: 0, count: rowFloats) // padding rows
                        continue
                    }
                    let row = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * p.bytesPerRow
                    for i in 0..<contentFloats { out[i] = Float(row[i]) }
                    (out + contentFloats).update(repeating: 0, count: rowFloats - contentFloats) // padding columns
                }
            }
        }
        return input
    }

    /// A buffer of this size from `kept` (taken out; the caller puts it back last), else a new one.
    private static func reuse(_ kept: inout [PixelBuffer], width: Int, height: Int) throws -> PixelBuffer {
        if let i = kept.firstIndex(where: { $0.width == width && $0.height == height }) { return kept.remove(at: i) }
        if kept.count >= buffersKept { kept.removeFirst() }
        return try PixelBuffer(width: width, height: height, format: .rgb24)
    }

    /// Runs the network on ``tensor`` and decodes every heatmap cell above `scoreThreshold`
    /// into a face in network-input pixels (before suppression).
    mutating func forward(_ input: NetworkInput, scoreThreshold: Float, model: CenterFaceModel) throws(FaceDetectorError) -> [Face] {
        let cells = (input.width / 4) * (input.height / 4)
        if heatmap.count < cells {
            heatmap = [Float](repeating: 0, count: cells)
            boxScale = [Float](repeating: 0, count: 2 * cells)
            offset = [Float](repeating: 0, count: 2 * cells)
            landmarks = [Float](repeating: 0, count: 10 * cells)
        }
        var message = [CChar](repeating: 0, count: 512)
        var shapes: [(Int32, Int32)] = []
        let status = try model.withNetwork(width: input.width, height: input.height) { net in
            tensor.withUnsafeBufferPointer { t in
                heatmap.withUnsafeMutableBufferPointer { h in
                    boxScale.withUnsafeMutableBufferPointer { s in
                        offset.withUnsafeMutableBufferPointer { o in
                            landmarks.withUnsafeMutableBufferPointer { l in
                                // The graph's outputs, by the names this export gave them.
                                model.outputNames[0].withCString { n0 in
                                    model.outputNames[1].withCString { n1 in
                                        model.outputNames[2].withCString { n2 in
                                            model.outputNames[3].withCString { n3 in
                                                var outputs = [
                                                    fkxnn_tensor(
                                                        name: n0, data: h.baseAddress, capacity: h.count, shape: (0, 0, 0, 0), count: 0),
                                                    fkxnn_tensor(
                                                        name: n1, data: s.baseAddress, capacity: s.count, shape: (0, 0, 0, 0), count: 0),
                                                    fkxnn_tensor(
                                                        name: n2, data: o.baseAddress, capacity: o.count, shape: (0, 0, 0, 0), count: 0),
                                                    fkxnn_tensor(
                                                        name: n3, data: l.baseAddress, capacity: l.count, shape: (0, 0, 0, 0), count: 0)
                                                ]
                                                let status = fkxnn_net_forward(
                                                    net, t.baseAddress, 3 * input.width * input.height, &outputs, Int32(outputs.count),
                                                    &message, message.count)
                                                shapes = outputs.map { ($0.shape.2, $0.shape.3) }
                                                return status
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        guard status == FKXNN_OK else { throw .inference(message: shimMessage(message, status: status.rawValue)) }
        let gh = Int(shapes[0].0)
        let gw = Int(shapes[0].1)
        guard gh * gw <= cells, shapes.allSatisfy({ Int($0.0) == gh && Int($0.1) == gw }) else {
            throw .inference(message: "unexpected output shapes \(shapes) for input \(input.width)x\(input.height)")
        }
        let n = gh * gw
        let maxX = Double(input.contentWidth)
        let maxY = Double(input.contentHeight)
        var faces: [Face] = []
        for cell in 0..<n where heatmap[cell] > scoreThreshold {
            let row = cell / gw
            let column = cell % gw
            let height = Double(expf(boxScale[cell])) * 4
            let width = Double(expf(boxScale[n + cell])) * 4
            let cy = (Double(row) + Double(offset[cell]) + 0.5) * 4
            let cx = (Double(column) + Double(offset[n + cell]) + 0.5) * 4
            // The face's whole box, then the part of it inside the image: a face cut by the
            // edge keeps its centre and size (CenterFace's reference decoding moved the box
            // inwards instead, onto pixels that are not the face).
            let left = cx - width / 2
            let top = cy - height / 2
            let x0 = min(max(0, left), maxX)
            let y0 = min(max(0, top), maxY)
            let x1 = min(max(0, left + width), maxX)
            let y1 = min(max(0, top + height), maxY)
            guard x1 - x0 >= 1, y1 - y0 >= 1 else { continue }
            var points: [Point] = []
            points.reserveCapacity(5)
            for j in 0..<5 {
                // Landmarks are fractions of the whole box.
                points.append(
                    Point(
                        x: Double(landmarks[(2 * j + 1) * n + cell]) * width + left,
                        y: Double(landmarks[2 * j * n + cell]) * height + top))
            }
            faces.append(
                Face(
                    bounds: Rect(
                        x: Int(saturating: x0.rounded()), y: Int(saturating: y0.rounded()),
                        width: Int(saturating: (x1 - x0).rounded()), height: Int(saturating: (y1 - y0).rounded())),
                    confidence: Double(heatmap[cell]), landmarks: points))
        }
        return faces
    }
}
