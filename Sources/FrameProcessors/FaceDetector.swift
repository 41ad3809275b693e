import COpenCVShim
import FrameCore
import FrameModels
import Foundation
import Synchronization

/// Errors from face detection.
public enum FaceDetectorError: Error, Sendable, CustomStringConvertible {
    /// No model file was found along the search path (see ``ModelCatalog``).
    case modelNotFound(String)
    /// OpenCV could not load the model (missing, empty or corrupt file).
    case modelLoadFailed(path: String, message: String)
    /// OpenCV threw while working; the message is OpenCV's.
    case openCV(message: String)
    case invalidOptions(String)
    case pixelBuffer(PixelBufferError)

    public var description: String {
        switch self {
        case let .modelNotFound(name): "face model \(name) not found (searched: \(ModelCatalog.searchPath.map(\.path).joined(separator: ", ")))"
        case let .modelLoadFailed(path, message): "cannot load face model \(path): \(message)"
        case let .openCV(message): "OpenCV error: \(message)"
        case let .invalidOptions(message): "invalid face detector options: \(message)"
        case let .pixelBuffer(error): error.description
        }
    }
}

/// Finds faces with an OpenCV cascade classifier (by default the Haar frontal-face model
/// shipped in Models/).
///
/// Thread-safe: calls on one detector are serialised (OpenCV's classifier keeps per-call
/// state). Use one detector per thread to detect in parallel.
public final class FaceDetector: Sendable {
    /// How to search. The defaults suit faces of 1/10 of the frame height and more.
    public struct Options: Sendable, Equatable {
        /// Step between pyramid scales (> 1): larger is faster and misses more.
        public var scaleFactor: Double = 1.1
        /// Neighbouring hits a detection needs: larger gives fewer false positives.
        public var minNeighbors: Int = 3
        /// Smallest and largest face, in the input's pixels (nil: the model's window / no limit).
        public var minFaceSize: Int? = nil
        public var maxFaceSize: Int? = nil
        /// The scale at which to detect (0 < s <= 1): the image is first shrunk by this factor
        /// with FrameKit's area resize, and faces are mapped back to the input's coordinates.
        public var detectionScale: Double = 1.0

        public init(scaleFactor: Double = 1.1, minNeighbors: Int = 3, minFaceSize: Int? = nil,
                    maxFaceSize: Int? = nil, detectionScale: Double = 1.0) {
            self.scaleFactor = scaleFactor
            self.minNeighbors = minNeighbors
            self.minFaceSize = minFaceSize
            self.maxFaceSize = maxFaceSize
            self.detectionScale = detectionScale
        }

        func validate() throws(FaceDetectorError) {
            guard scaleFactor > 1.0, scaleFactor < 4 else { throw .invalidOptions("scaleFactor must be in (1, 4), got \(scaleFactor)") }
            guard minNeighbors >= 0 else { throw .invalidOptions("minNeighbors must be >= 0") }
            guard detectionScale > 0, detectionScale <= 1 else { throw .invalidOptions("detectionScale must be in (0, 1]") }
            if let min = minFaceSize, min < 0 { throw .invalidOptions("minFaceSize must be >= 0") }
            if let max = maxFaceSize, let min = minFaceSize, max > 0, max < min {
                throw .invalidOptions("maxFaceSize is below minFaceSize")
            }
        }
    }

    public let options: Options
    /// The model file in use.
    public let modelURL: URL

    // The classifier plus scratch buffers reused between frames of one size; the Mutex
    // serialises calls (OpenCV's classifier is not safe to share between threads).
    private let handle: Mutex<SendableBox<(cascade: OpaquePointer, gray: PixelBuffer?, scaled: PixelBuffer?)>>
    private let cascade: SendableBox<OpaquePointer>

    /// Loads the default model (see ``ModelCatalog``) or the cascade at `modelURL`.
    public init(modelURL: URL? = nil, options: Options = Options()) throws(FaceDetectorError) {
        try options.validate()
        guard let url = modelURL ?? ModelCatalog.url(forModel: ModelCatalog.defaultFaceModel) else {
            throw .modelNotFound(ModelCatalog.defaultFaceModel)
        }
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer? = nil
        let status = fkcv_cascade_create(url.path, &raw, &message, message.count)
        guard status == FKCV_OK, let raw else {
            throw .modelLoadFailed(path: url.path, message: Self.text(message, status))
        }
        self.options = options
        self.modelURL = url
        self.cascade = SendableBox(raw)
        self.handle = Mutex(SendableBox((raw, nil, nil)))
    }

    deinit { fkcv_cascade_destroy(cascade.value) }

    /// Faces in `image` (any format), with bounds in `image`'s pixel coordinates.
    public func detect(in image: PixelBuffer) throws(FaceDetectorError) -> [Face] {
        try detect(in: image, region: nil)
    }

    /// Faces inside `region` of `image` only (bounds still in `image`'s coordinates).
    public func detect(in image: PixelBuffer, region: Rect?) throws(FaceDetectorError) -> [Face] {
        try handle.withLock { (box) throws(FaceDetectorError) -> [Face] in
            do {
                // Gray (the luma plane itself for Y'CbCr formats: no conversion), then shrink.
                var gray = try box.value.gray.flatMap { $0.width == image.width && $0.height == image.height ? $0 : nil }
                    ?? PixelBuffer(width: image.width, height: image.height, format: .gray8)
                let source: PixelBuffer
                if image.format == .gray8 || image.format.isYCbCr && image.format != .yuyv {
                    source = image
                } else {
                    try ColorConversion.convertToGray(image, into: &gray)
                    source = gray
                }
                box.value.gray = gray
                let scale = options.detectionScale
                var detectOn = source
                if scale < 1 {
                    let sw = max(2, Int(Double(image.width) * scale) & ~1), sh = max(2, Int(Double(image.height) * scale) & ~1)
                    var scaled = try box.value.scaled.flatMap { $0.width == sw && $0.height == sh ? $0 : nil }
                        ?? PixelBuffer(width: sw, height: sh, format: .gray8)
                    try Resize.area(source, into: &scaled, plane: 0)
                    box.value.scaled = scaled
                    detectOn = scaled
                }
                let sx = Double(image.width) / Double(detectOn.width), sy = Double(image.height) / Double(detectOn.height)
                let roi = region.map { r in
                    Rect(x: Int(Double(r.x) / sx), y: Int(Double(r.y) / sy),
                         width: Int((Double(r.width) / sx).rounded(.up)), height: Int((Double(r.height) / sy).rounded(.up)))
                        .clamped(width: detectOn.width, height: detectOn.height)
                } ?? Rect(x: 0, y: 0, width: detectOn.width, height: detectOn.height)
                guard roi.width >= 24, roi.height >= 24 else { return [] }
                let found = try runCascade(box.value.cascade, on: detectOn, roi: roi, scale: sx)
                return found.map { r in
                    Face(bounds: Rect(x: Int((Double(r.x + roi.x) * sx).rounded()), y: Int((Double(r.y + roi.y) * sy).rounded()),
                                      width: Int((Double(r.width) * sx).rounded()), height: Int((Double(r.height) * sy).rounded())))
                }
            } catch let error as FaceDetectorError {
                throw error
            } catch let error as PixelBufferError {
                throw .pixelBuffer(error)
            } catch {
                throw .openCV(message: "\(error)")
            }
        }
    }

    private func runCascade(_ cascade: OpaquePointer, on image: PixelBuffer, roi: Rect, scale: Double) throws(FaceDetectorError) -> [Rect] {
        var params = fkcv_detect_params(
            scale_factor: options.scaleFactor, min_neighbors: Int32(options.minNeighbors),
            min_width: Int32(options.minFaceSize.map { Double($0) / scale } ?? 0),
            min_height: Int32(options.minFaceSize.map { Double($0) / scale } ?? 0),
            max_width: Int32(options.maxFaceSize.map { Double($0) / scale } ?? 0),
            max_height: Int32(options.maxFaceSize.map { Double($0) / scale } ?? 0))
        var rects = [fkcv_rect](repeating: fkcv_rect(), count: 64)
        var found: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let status = image.withUnsafeBytes(ofPlane: 0) { bytes, plane in
            let origin = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + roi.y * plane.bytesPerRow + roi.x
            return fkcv_cascade_detect(cascade, origin, Int32(roi.width), Int32(roi.height), plane.bytesPerRow,
                                       &params, &rects, Int32(rects.count), &found, &message, message.count)
        }
        guard status == FKCV_OK else { throw .openCV(message: Self.text(message, status)) }
        return rects.prefix(Int(min(found, Int32(rects.count)))).map {
            Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height))
        }
    }

    private static func text(_ message: [CChar], _ status: fkcv_status) -> String {
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.isEmpty ? "status \(status.rawValue)" : text
    }
}
