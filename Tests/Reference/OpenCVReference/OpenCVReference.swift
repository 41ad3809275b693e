import COpenCVBaseline
import Foundation
import FrameCore

/// OpenCV's own functions on FrameKit buffers (one thread), for tests and benchmarks.
public enum OpenCV {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    public enum ColorCode: Sendable {
        case bgraToGray, rgbToGray, yuv420ToGray, yuyvToGray
        case nv12ToRGB, nv12ToBGRA, i420ToRGB, i420ToBGRA, yuyvToRGB, yuyvToBGRA
        /// To I420, BT.601 video range; OpenCV takes each 2x2 block's chroma from its top-left pixel.
        case rgbToI420, bgraToI420
        var raw: fkcvb_color_code {
            switch self {
            case .bgraToGray: FKCVB_BGRA2GRAY
            case .rgbToGray: FKCVB_RGB2GRAY
            case .yuv420ToGray: FKCVB_YUV2GRAY_420
            case .yuyvToGray: FKCVB_YUV2GRAY_YUY2
            case .nv12ToRGB: FKCVB_YUV2RGB_NV12
            case .nv12ToBGRA: FKCVB_YUV2BGRA_NV12
            case .i420ToRGB: FKCVB_YUV2RGB_I420
            case .i420ToBGRA: FKCVB_YUV2BGRA_I420
            case .yuyvToRGB: FKCVB_YUV2RGB_YUY2
            case .yuyvToBGRA: FKCVB_YUV2BGRA_YUY2
            case .rgbToI420: FKCVB_RGB2YUV_I420
            case .bgraToI420: FKCVB_BGRA2YUV_I420
            }
        }
    }

    /// The whole buffer as OpenCV sees it: packed formats as rows x cols x channels; planar
    /// Y'CbCr as one (height * 3/2) x width single-channel image (OpenCV's convention), which
    /// requires tightly packed planes.
    static func image(_ b: PixelBuffer) -> fkcvb_image {
        let p = b.plane(0)
        let base = b.withUnsafeBytes(ofPlane: 0) { raw, _ in UnsafeMutableRawPointer(mutating: raw.baseAddress!) }
        switch b.format {
        case .nv12VideoRange, .nv12FullRange, .i420:
            return fkcvb_image(
                rows: Int32(b.height * 3 / 2), cols: Int32(b.width), channels: 1,
                data: base.assumingMemoryBound(to: UInt8.self), step: p.bytesPerRow)
        case .yuyv:
            return fkcvb_image(
                rows: Int32(b.height), cols: Int32(b.width), channels: 2,
                data: base.assumingMemoryBound(to: UInt8.self), step: p.bytesPerRow)
        default:
            return fkcvb_image(
                rows: Int32(b.height), cols: Int32(b.width), channels: Int32(p.bytesPerPixel),
                data: base.assumingMemoryBound(to: UInt8.self), step: p.bytesPerRow)
        }
    }

    private static func check(_ body: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(Failure) {
        var message = [CChar](repeating: 0, count: 512)
        let status = message.withUnsafeMutableBufferPointer { body($0.baseAddress!, $0.count) }
        if status != 0 {
            throw Failure(description: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    // `destination` is written through the pointer taken from it: make sure it owns its
    // storage alone first (a no-op for fresh buffers).
    private static func target(_ b: inout PixelBuffer) -> fkcvb_image {
        b.withUnsafeMutableBytes(ofPlane: 0) { _, _ in }
        return image(b)
    }

    public static func cvtColor(_ s: PixelBuffer, _ d: inout PixelBuffer, _ code: ColorCode) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_cvt_color(image(s), dst, Int32(code.raw.rawValue), $0, $1) }
    }
    public static func resize(_ s: PixelBuffer, _ d: inout PixelBuffer, area: Bool) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_resize(image(s), dst, area ? 3 : 1, $0, $1) }
    }
    public static func boxBlur(_ s: PixelBuffer, _ d: inout PixelBuffer, size: Int) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_box_blur(image(s), dst, Int32(size), $0, $1) }
    }
    public static func gaussianBlur(_ s: PixelBuffer, _ d: inout PixelBuffer, size: Int) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_gaussian_blur(image(s), dst, Int32(size), $0, $1) }
    }
    public static func sobelMagnitude(_ s: PixelBuffer, _ d: inout PixelBuffer) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_sobel_magnitude(image(s), dst, $0, $1) }
    }
    public static func threshold(_ s: PixelBuffer, _ d: inout PixelBuffer, _ t: Double, max: Double) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_threshold(image(s), dst, t, max, $0, $1) }
    }
    public static func equalizeHistogram(_ s: PixelBuffer, _ d: inout PixelBuffer) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_equalize_hist(image(s), dst, $0, $1) }
    }
    /// rotation: 90, 180 or 270 degrees clockwise.
    public static func rotate(_ s: PixelBuffer, _ d: inout PixelBuffer, degrees: Int) throws(Failure) {
        let dst = target(&d)
        let code: Int32 = degrees == 90 ? 0 : degrees == 180 ? 1 : 2
        try check { fkcvb_rotate(image(s), dst, code, $0, $1) }
    }
    public static func mirror(_ s: PixelBuffer, _ d: inout PixelBuffer) throws(Failure) {
        let dst = target(&d)
        try check { fkcvb_flip(image(s), dst, 1, $0, $1) }
    }
    public static func setThreads(_ n: Int) { fkcvb_set_num_threads(Int32(n)) }

    /// What OpenCV's VideoCapture reads from a video file.
    public struct VideoProbe: Sendable, Equatable {
        public var decodedFrames: Int
        public var headerFrames: Int
        public var width: Int
        public var height: Int
        public var fps: Double
    }

    /// Reads a video file with OpenCV (FFmpeg backend, or OpenCV's own MJPEG reader).
    public static func probeVideo(_ path: String, ownMJPEGReader: Bool = false) throws(Failure) -> VideoProbe {
        var decoded: Int32 = 0
        var frames: Int32 = 0
        var w: Int32 = 0
        var h: Int32 = 0
        var fps = 0.0
        try check { fkcvb_video_probe(path, ownMJPEGReader ? 1 : 0, &decoded, &frames, &w, &h, &fps, $0, $1) }
        return VideoProbe(decodedFrames: Int(decoded), headerFrames: Int(frames), width: Int(w), height: Int(h), fps: fps)
    }
}

extension OpenCV {
    /// A box from the reference CenterFace run, in the network input's pixels.
    public struct CenterFaceBox: Sendable {
        public var x0, y0, x1, y1, score: Float
    }

    /// CenterFace run entirely by OpenCV (its resize, blobFromImage, forward) and decoded as the
    /// model's reference code does: what ``FaceDetector`` is checked against.
    public static func centerFace(
        model: String, rgb: PixelBuffer, contentWidth: Int, contentHeight: Int,
        threshold: Float
    ) throws(Failure) -> [CenterFaceBox] {
        var boxes = [Float](repeating: 0, count: 5 * 256)
        var message = [CChar](repeating: 0, count: 512)
        let count = boxes.withUnsafeMutableBufferPointer { b in
            fkcvb_centerface(
                model, image(rgb), Int32(contentWidth), Int32(contentHeight), threshold, b.baseAddress, 256,
                &message, message.count)
        }
        guard count >= 0 else {
            throw Failure(description: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return (0..<Int(count)).map { i in
            CenterFaceBox(x0: boxes[5 * i], y0: boxes[5 * i + 1], x1: boxes[5 * i + 2], y1: boxes[5 * i + 3], score: boxes[5 * i + 4])
        }
    }
}

extension OpenCV {
    /// An ONNX network run by OpenCV's dnn module on a planar [1, C, H, W] input: each named
    /// output's floats (NCHW), in the order named. What CXNNPack's networks are checked against.
    public static func dnnForward(
        model: String, planar input: [Float], channels: Int, height: Int, width: Int, outputs names: [String]
    ) throws(Failure) -> [[Float]] {
        var out = [Float](repeating: 0, count: 64 * height * width)
        var counts = [Int64](repeating: 0, count: names.count)
        var message = [CChar](repeating: 0, count: 512)
        let cNames = names.map { strdup($0) }
        defer { for name in cNames { free(name) } }
        let written = cNames.map { UnsafePointer($0) }.withUnsafeBufferPointer { n in
            out.withUnsafeMutableBufferPointer { o in
                fkcvb_dnn_forward(
                    model, input, Int32(channels), Int32(height), Int32(width), n.baseAddress, Int32(names.count), o.baseAddress,
                    o.count, &counts, &message, message.count)
            }
        }
        guard written >= 0 else {
            throw Failure(description: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        var start = 0
        return counts.map { count in
            defer { start += Int(count) }
            return Array(out[start..<start + Int(count)])
        }
    }
}
