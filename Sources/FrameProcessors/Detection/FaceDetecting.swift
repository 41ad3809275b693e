import Foundation
import FrameCore
import FrameModels

/// What a face detector is: a pass over a region of an image at a scale, giving the faces it
/// finds and the weaker boxes below its threshold. The chain stage (``FaceDetectionProcessor``),
/// the video tracker (``FaceTracker``) and the CLI take any of them; everything else they ask
/// (``detect(in:region:)``) is built on the pass.
public protocol FaceDetecting: Sendable {
    /// A short name for summaries and reports ("cnn", "haar").
    var name: String { get }
    /// The model file in use.
    var modelURL: URL { get }
    /// One pass over `region` of `image` (nil: all of it), boxes and landmarks in `image`'s
    /// coordinates: the faces the detector reports, and the weaker boxes it does not
    /// (confidence from `floor` up to its own threshold; a tracker lets a weak box confirm a
    /// face it already follows, never start one). `scale`: how much the region is shrunk (or,
    /// above 1, enlarged) for the pass — its longest side at the detector's input is that side
    /// times `scale`; nil: the detector's own (``passScale(width:height:)`` for a whole frame).
    /// A detector without confidences gives no weaker boxes; one that cannot scale ignores
    /// `scale`. A region wholly outside the image finds nothing.
    func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    /// The scale a whole `width` x `height` frame is shrunk to for a pass (1: not shrunk). A
    /// tracker whose detector shrinks frames looks at tiles of them too, for faces too small to
    /// be found in the shrunk frame. Optional: 1 by default.
    func passScale(width: Int, height: Int) -> Double
    /// Gets ready for frames of this size (a CNN runs its network once, so the first frame is
    /// not slowed by the network's set-up). Optional: detection works without it.
    func prepare(width: Int, height: Int) throws(FaceDetectorError)
}

/// What one pass of a detector over a frame found (see ``FaceDetecting/pass(in:region:scale:candidatesDownTo:)``).
public struct DetectionPass: Sendable, Equatable {
    /// The faces, as the detector reports them.
    public var faces: [Face]
    /// Weaker boxes, below the detector's threshold: evidence for a face already known, not a face.
    public var candidates: [Face]

    public init(faces: [Face], candidates: [Face] = []) {
        self.faces = faces
        self.candidates = candidates
    }

    /// Scored boxes, suppressed together, split at a detector's threshold: above it a face
    /// (as `FaceDetector` keeps scores above its threshold), from `floor` up to it a candidate.
    public init(splitting boxes: [Face], threshold: Double, floor: Double = 0) {
        self.init(
            faces: boxes.filter { ($0.confidence ?? 0) > threshold },
            candidates: boxes.filter { ($0.confidence ?? 0) >= floor && ($0.confidence ?? 0) <= threshold })
    }
}

extension FaceDetecting {
    public func prepare(width: Int, height: Int) throws(FaceDetectorError) {}

    public func passScale(width: Int, height: Int) -> Double { 1 }

    /// Faces inside `region` of `image` (the whole image when nil): a pass at the detector's
    /// own scale with no weaker boxes. A region partly outside the image is searched where it
    /// is inside; one wholly outside, or empty, throws (a tracker's pass there finds nothing).
    public func detect(in image: PixelBuffer, region: Rect? = nil) throws(FaceDetectorError) -> [Face] {
        try requireOverlap(region, with: image)
        return try pass(in: image, region: region, scale: nil, candidatesDownTo: 1).faces
    }

    /// A pass over `region` (nil: the whole image) at the detector's own scale.
    public func pass(in image: PixelBuffer, region: Rect? = nil, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        try pass(in: image, region: region, scale: nil, candidatesDownTo: floor)
    }
}

/// The model file a detector loads: `given`, else `name` along ModelCatalog's search path;
/// checked readable here (OpenCV prints its own error line for a missing file before it fails).
/// `shipped`: the file was found by name outside `FRAMEKIT_MODELS`, so it is the shipped model,
/// and must have its digest (``checkShippedDigest(_:named:)``).
func modelFile(_ given: URL?, named name: String) throws(FaceDetectorError) -> (url: URL, shipped: Bool) {
    guard let url = given ?? ModelCatalog.url(forModel: name) else { throw .modelNotFound(name) }
    guard FileManager.default.isReadableFile(atPath: url.path) else {
        throw .modelLoadFailed(path: url.path, message: "no readable file there")
    }
    return (url, given == nil && ModelCatalog.isShipped(url))
}

/// Refuses a shipped model file whose SHA-256 is not the one it was shipped with
/// (`ModelCatalog.shippedSHA256`, Models/MANIFEST.json): damaged, or replaced by another file.
func checkShippedDigest(_ url: URL, named name: String) throws(FaceDetectorError) {
    guard let expected = ModelCatalog.shippedSHA256[name] else { return }
    let digest: String
    do { digest = try SHA256.hex(ofFileAt: url.path) } catch {
        throw .modelLoadFailed(path: url.path, message: "cannot read it: \(error.localizedDescription)")
    }
    guard digest == expected else {
        throw .modelLoadFailed(
            path: url.path,
            message:
                "its SHA-256 is \(digest), not the shipped \(name)'s \(expected) (Models/MANIFEST.json): the file is damaged or was replaced; another model is given by path (framekit detect --model FILE, FaceDetector(modelURL:))"
        )
    }
}

/// Errors from face detection.
public enum FaceDetectorError: Error, Sendable, CustomStringConvertible {
    /// No model file was found along the search path (see `ModelCatalog`).
    case modelNotFound(String)
    /// The model could not be loaded (missing, empty, corrupt or forged file, or an operator the
    /// detector does not run).
    case modelLoadFailed(path: String, message: String)
    /// OpenCV threw while working (the Haar detector); the message is OpenCV's.
    case openCV(message: String)
    /// The network could not be set up or run (XNNPACK, ``FaceDetector``); the message says why.
    case inference(message: String)
    case invalidOptions(String)
    case pixelBuffer(PixelBufferError)

    public var description: String {
        switch self {
        case .modelNotFound(let name):
            "face model \(name) not found (searched: \(ModelCatalog.searchPath.map(\.path).joined(separator: ", "))); "
                + "set FRAMEKIT_MODELS to a folder holding it, or keep the executable's resource bundle "
                + "(NAME_FrameModels.resources, from the build folder) beside it"
        case .modelLoadFailed(let path, let message): "cannot load face model \(path): \(message)"
        case .openCV(let message): "OpenCV error: \(message)"
        case .inference(let message): "network error: \(message)"
        case .invalidOptions(let message): "invalid face detector options: \(message)"
        case .pixelBuffer(let error): error.description
        }
    }
}

/// Non-maximum suppression: the highest-confidence face of each cluster whose boxes overlap by
/// IoU ≥ `threshold`.
func suppressOverlaps(_ faces: [Face], threshold: Double) -> [Face] {
    var kept: [Face] = []
    for face in faces.sorted(by: { ($0.confidence ?? 0) > ($1.confidence ?? 0) })
    where !kept.contains(where: { $0.bounds.iou(face.bounds) >= threshold }) {
        kept.append(face)
    }
    return kept
}

/// The face-size limits every detector's options share: neither negative, max (0: none) not
/// below min.
func checkFaceSizes(min: Int?, max: Int?) throws(FaceDetectorError) {
    if let min, min < 0 { throw .invalidOptions("minFaceSize must be >= 0") }
    if let max, max < 0 { throw .invalidOptions("maxFaceSize must be >= 0") }
    if let max, let min, max > 0, max < min { throw .invalidOptions("maxFaceSize is below minFaceSize") }
}

/// A blank gray frame of about this size (even sides, at least 2x2), to set a detector's
/// network up on before the first real frame.
func blankFrame(width: Int, height: Int) throws(FaceDetectorError) -> PixelBuffer {
    do { return try PixelBuffer(width: max(2, width & ~1), height: max(2, height & ~1), format: .gray8) } catch {
        throw .pixelBuffer(error)
    }
}

/// The part of `image` a detector looks at: `region` (nil: all of it) inside the image, its
/// edges on the format's crop grid (Y'CbCr crops start and end on even pixels: chroma is shared
/// by pixel pairs).
func detectionArea(_ region: Rect?, in image: PixelBuffer) -> Rect {
    var area = (region ?? Rect(x: 0, y: 0, width: image.width, height: image.height)).clamped(width: image.width, height: image.height)
    let align = image.format.sizeAlignment
    area.x -= area.x % align.width
    area.y -= area.y % align.height
    area.width -= area.width % align.width
    area.height -= area.height % align.height
    return area
}

/// A region given to ``FaceDetecting/detect(in:region:)`` must overlap the image (the part
/// outside is not searched): one wholly outside, or empty, is a mistake said as such, not an
/// empty result.
func requireOverlap(_ region: Rect?, with image: PixelBuffer) throws(FaceDetectorError) {
    guard let region else { return }
    if region.width <= 0 || region.height <= 0 || region.clamped(width: image.width, height: image.height).area == 0 {
        throw .pixelBuffer(.regionOutsideImage(region, width: image.width, height: image.height, format: image.format))
    }
}

/// A C shim's message buffer as text, or its status when the shim wrote none.
func shimMessage(_ message: [CChar], status: some BinaryInteger) -> String {
    let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    return text.isEmpty ? "status \(status)" : text
}

/// `body`'s result, its errors as a detector reports them: its own as they are, a pixel
/// buffer's wrapped, anything else as an inference error.
func mappingDetectorErrors<T>(_ body: () throws -> T) throws(FaceDetectorError) -> T {
    do {
        return try body()
    } catch let error as FaceDetectorError {
        throw error
    } catch let error as PixelBufferError {
        throw .pixelBuffer(error)
    } catch {
        throw .inference(message: "\(error)")
    }
}
