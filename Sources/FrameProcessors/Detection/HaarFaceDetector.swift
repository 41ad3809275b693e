import COpenCVShim
import Foundation
import FrameCore
import FrameModels
import Synchronization

/// Finds faces with an OpenCV cascade classifier (by default the Haar frontal-face model
/// shipped in Models/).
///
/// Thread-safe: calls on one detector are serialised (OpenCV's classifier keeps per-call
/// state). Use one detector per thread to detect in parallel.
public final class HaarFaceDetector: FaceDetecting {
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

        public init(
            scaleFactor: Double = 1.1, minNeighbors: Int = 3, minFaceSize: Int? = nil,
            maxFaceSize: Int? = nil, detectionScale: Double = 1.0
        ) {
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
            try checkFaceSizes(min: minFaceSize, max: maxFaceSize)
        }
    }

    public let options: Options
    /// The model file in use.
    public let modelURL: URL

    // The classifier plus scratch buffers reused between frames of one size; the Mutex
    // serialises calls (OpenCV's classifier is not safe to share between threads).
    private struct Scratch {
        let cascade: OpaquePointer
        var gray: PixelBuffer?
        var scaled: PixelStorage?
        mutating func takeScaled() -> PixelStorage {
            defer { scaled = nil }
            return scaled!
        }
    }
    private let scratch: Mutex<Scratch>

    /// Loads the default model (see `ModelCatalog`) or the cascade at `modelURL`.
    public init(modelURL: URL? = nil, options: Options = Options()) throws(FaceDetectorError) {
        try options.validate()
        let url = try modelFile(modelURL, named: ModelCatalog.haarFaceModel).url
        var message = [CChar](repeating: 0, count: 512)
        var raw: OpaquePointer? = nil
        let status = fkcv_cascade_create(url.path, &raw, &message, message.count)
        guard status == FKCV_OK, let raw else {
            throw .modelLoadFailed(path: url.path, message: shimMessage(message, status: status.rawValue))
        }
        self.options = options
        self.modelURL = url
        self.scratch = Mutex(Scratch(cascade: raw))
    }

    deinit { scratch.withLock { fkcv_cascade_destroy($0.cascade) } }

    public var name: String { "haar" }

    /// The cascade's faces in `region`, no weaker boxes (a cascade gives no confidence), at its
    /// own scale (``Options/detectionScale``: `scale` is not used). A region wholly outside the
    /// image finds nothing.
    public func pass(in image: PixelBuffer, region: Rect?, scale: Double?, candidatesDownTo floor: Double) throws(FaceDetectorError)
        -> DetectionPass
    {
        if let region, region.clamped(width: image.width, height: image.height).area == 0 { return DetectionPass(faces: []) }
        return DetectionPass(faces: try detect(in: image, region: region, options: options))
    }

    /// As ``detect(in:region:)`` with other options for this call (a tracker searches small
    /// regions at their own scale and face size). Only the region is gray-converted and shrunk,
    /// into buffers kept between calls.
    public func detect(in image: PixelBuffer, region: Rect?, options call: Options) throws(FaceDetectorError) -> [Face] {
        try call.validate()
        return try scratch.withLock { (box) throws(FaceDetectorError) -> [Face] in
            let area = detectionArea(region, in: image)
            guard area.width >= 24, area.height >= 24 else { return [] }
            return try mappingDetectorErrors {
                // Gray: the luma plane itself for NV12/I420/GRAY8 (no work); else only the region
                // is converted, into a buffer kept between calls.
                var detectOn: PixelBuffer
                switch image.format {
                case .gray8, .nv12VideoRange, .nv12FullRange, .i420:
                    detectOn = try image.lumaPlane().cropped(to: area)
                default:
                    var converted =
                        try box.gray.flatMap { $0.width == area.width && $0.height == area.height ? $0 : nil }
                        ?? PixelBuffer(width: area.width, height: area.height, format: .gray8)
                    box.gray = nil // the only owner while it is written: no copy-on-write
                    try ColorConversion.convertToGray(image.cropped(to: area), into: &converted)
                    box.gray = converted
                    detectOn = converted
                }
                if call.detectionScale < 1 {
                    let sw = max(24, Int(Double(area.width) * call.detectionScale))
                    let sh = max(24, Int(Double(area.height) * call.detectionScale))
                    guard sw <= area.width, sh <= area.height else { return [] }
                    // One scratch allocation, grown as needed; each call views the size it needs.
                    // It is moved out of the box while in use, so the view is its only owner
                    // and writing into it never triggers copy-on-write.
                    if (box.scaled?.byteCount ?? 0) < sw * sh { box.scaled = PixelStorage(byteCount: max(sw * sh, 640 * 480)) }
                    var scaled = try PixelBuffer(width: sw, height: sh, format: .gray8, packedStorage: box.takeScaled())
                    try Resize.area(detectOn, into: &scaled)
                    detectOn = scaled
                    box.scaled = scaled.unsafeStorageForViews // back for the next call (only read from here on)
                }
                let sx = Double(area.width) / Double(detectOn.width)
                let sy = Double(area.height) / Double(detectOn.height)
                let found = try runCascade(box.cascade, on: detectOn, options: call, scale: sx)
                return found.map { r in
                    Face(
                        bounds: Rect(
                            x: area.x + Int((Double(r.x) * sx).rounded()), y: area.y + Int((Double(r.y) * sy).rounded()),
                            width: Int((Double(r.width) * sx).rounded()), height: Int((Double(r.height) * sy).rounded())))
                }
            }
        }
    }

    private func runCascade(_ cascade: OpaquePointer, on image: PixelBuffer, options: Options, scale: Double) throws(FaceDetectorError)
        -> [Rect]
    {
        let minSide = Int32(options.minFaceSize.map { Double($0) / scale } ?? 0)
        let maxSide = Int32(options.maxFaceSize.map { Double($0) / scale } ?? 0)
        var params = fkcv_detect_params(
            scale_factor: options.scaleFactor, min_neighbors: Int32(options.minNeighbors),
            min_width: minSide, min_height: minSide, max_width: maxSide, max_height: maxSide)
        var rects = [fkcv_rect](repeating: fkcv_rect(), count: 64)
        var found: Int32 = 0
        var message = [CChar](repeating: 0, count: 512)
        let status = image.withUnsafeBytes(ofPlane: 0) { bytes, plane in
            let origin = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            return fkcv_cascade_detect(
                cascade, origin, Int32(image.width), Int32(image.height), plane.bytesPerRow,
                &params, &rects, Int32(rects.count), &found, &message, message.count)
        }
        guard status == FKCV_OK else { throw .openCV(message: shimMessage(message, status: status.rawValue)) }
        return rects.prefix(Int(min(found, Int32(rects.count)))).map {
            Rect(x: Int($0.x), y: Int($0.y), width: Int($0.width), height: Int($0.height))
        }
    }
}
