import Foundation
import FrameKit
import OpenCVReference

/// Each filter against OpenCV's own function on the same buffers, and memcpy of the same bytes.
struct FilterResult: Codable {
    var name: String
    var size: String
    var framekit_ns_per_px: Double
    var opencv_ns_per_px: Double
    var memcpy_ns_per_px: Double
    var ratio: Double
    var spread: Double
    /// libyuv on the same buffers, for the operations it has (nil otherwise, and in old baselines).
    var libyuv_ns_per_px: Double?
    var ratio_libyuv: Double?
    /// The kernel build that ran (`KernelDispatch.path`: avx2 or baseline).
    var simd: String?
}

enum FilterSuite {
    struct Case: Sendable {
        var name: String
        var source: PixelFormat
        var target: PixelFormat
        var framekit: @Sendable (PixelBuffer, inout PixelBuffer) throws -> Void
        var opencv: @Sendable (PixelBuffer, inout PixelBuffer) throws -> Void
        var targetSize: (@Sendable (Int, Int) -> (Int, Int))? = nil
    }

    static let cases: [Case] = [
        Case(
            name: "nv12-to-gray", source: .nv12VideoRange, target: .gray8,
            framekit: { try ColorConversion.convertToGray($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .yuv420ToGray) }),
        Case(
            name: "yuyv-to-gray", source: .yuyv, target: .gray8,
            framekit: { try ColorConversion.convertToGray($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .yuyvToGray) }),
        Case(
            name: "bgra-to-gray", source: .bgra32, target: .gray8,
            framekit: { try ColorConversion.convertToGray($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .bgraToGray) }),
        Case(
            name: "rgb-to-gray", source: .rgb24, target: .gray8,
            framekit: { try ColorConversion.convertToGray($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .rgbToGray) }),
        Case(
            name: "nv12-to-bgra", source: .nv12VideoRange, target: .bgra32,
            framekit: { try ColorConversion.convert($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .nv12ToBGRA) }),
        Case(
            name: "nv12-to-rgb", source: .nv12VideoRange, target: .rgb24,
            framekit: { try ColorConversion.convert($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .nv12ToRGB) }),
        Case(
            name: "i420-to-rgb", source: .i420, target: .rgb24,
            framekit: { try ColorConversion.convert($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .i420ToRGB) }),
        Case(
            name: "yuyv-to-bgra", source: .yuyv, target: .bgra32,
            framekit: { try ColorConversion.convert($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .yuyvToBGRA) }),
        // RGB → Y'CbCr 4:2:0. OpenCV 4.6 has no NV12 output: its I420 (the same work, planes apart)
        // is the baseline for both; it takes chroma from each block's top-left pixel, FrameKit
        // and libyuv the block's mean.
        Case(
            name: "rgb-to-i420", source: .rgb24, target: .i420,
            framekit: { try ColorConversion.convertToYCbCr($0, into: &$1) }, opencv: { try OpenCV.cvtColor($0, &$1, .rgbToI420) }),
        Case(
            name: "bgra-to-nv12", source: .bgra32, target: .nv12VideoRange,
            framekit: { try ColorConversion.convertToYCbCr($0, into: &$1) },
            // (OpenCV sees an NV12 buffer as the same w x 3h/2 bytes as an I420 one: it writes its I420 there.)
            opencv: { try OpenCV.cvtColor($0, &$1, .bgraToI420) }),
        Case(
            name: "resize-area-half", source: .gray8, target: .gray8,
            framekit: { try Resize.area($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: true) },
            targetSize: { ($0 / 2, $1 / 2) }),
        Case(
            name: "resize-area-0.375", source: .gray8, target: .gray8,
            framekit: { try Resize.area($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: true) },
            targetSize: { ($0 * 3 / 8, $1 * 3 / 8) }),
        Case(
            name: "resize-bilinear-0.75", source: .gray8, target: .gray8,
            framekit: { try Resize.bilinear($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: false) },
            targetSize: { ($0 * 3 / 4, $1 * 3 / 4) }),
        // libyuv has dedicated row functions for 1/2, 3/4 and 3/8 (fixed 8-bit box weights for the
        // last two); 5/8 is a ratio it resamples in general, as most sizes a user asks for are.
        Case(
            name: "resize-bilinear-0.5", source: .gray8, target: .gray8,
            framekit: { try Resize.bilinear($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: false) },
            targetSize: { ($0 / 2, $1 / 2) }),
        Case(
            name: "resize-bilinear-0.625", source: .gray8, target: .gray8,
            framekit: { try Resize.bilinear($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: false) },
            targetSize: { ($0 * 5 / 8, $1 * 5 / 8) }),
        Case(
            name: "resize-area-0.625", source: .gray8, target: .gray8,
            framekit: { try Resize.area($0, into: &$1) }, opencv: { try OpenCV.resize($0, &$1, area: true) },
            targetSize: { ($0 * 5 / 8, $1 * 5 / 8) }),
        Case(
            name: "box-blur-3", source: .gray8, target: .gray8,
            framekit: { try Filters.boxBlur($0, into: &$1, size: .three) }, opencv: { try OpenCV.boxBlur($0, &$1, size: 3) }),
        Case(
            name: "box-blur-5", source: .gray8, target: .gray8,
            framekit: { try Filters.boxBlur($0, into: &$1, size: .five) }, opencv: { try OpenCV.boxBlur($0, &$1, size: 5) }),
        Case(
            name: "gaussian-blur-3", source: .gray8, target: .gray8,
            framekit: { try Filters.gaussianBlur($0, into: &$1, size: .three) }, opencv: { try OpenCV.gaussianBlur($0, &$1, size: 3) }),
        Case(
            name: "gaussian-blur-5", source: .gray8, target: .gray8,
            framekit: { try Filters.gaussianBlur($0, into: &$1, size: .five) }, opencv: { try OpenCV.gaussianBlur($0, &$1, size: 5) }),
        Case(
            name: "sobel-magnitude", source: .gray8, target: .gray8,
            framekit: { try Filters.sobelMagnitude($0, into: &$1) }, opencv: { try OpenCV.sobelMagnitude($0, &$1) }),
        Case(
            name: "threshold", source: .gray8, target: .gray8,
            framekit: { try Filters.threshold($0, into: &$1, threshold: 128) }, opencv: { try OpenCV.threshold($0, &$1, 128, max: 255) }),
        Case(
            name: "equalize-histogram", source: .gray8, target: .gray8,
            framekit: { try Filters.equalizeHistogram($0, into: &$1) }, opencv: { try OpenCV.equalizeHistogram($0, &$1) }),
        Case(
            name: "rotate-90-gray", source: .gray8, target: .gray8,
            framekit: { try Transform.apply($0, rotation: .clockwise90, mirrored: false, into: &$1) },
            opencv: { try OpenCV.rotate($0, &$1, degrees: 90) }, targetSize: { ($1, $0) }),
        Case(
            name: "mirror-bgra", source: .bgra32, target: .bgra32,
            framekit: { try Transform.apply($0, rotation: .none, mirrored: true, into: &$1) }, opencv: { try OpenCV.mirror($0, &$1) })
    ]

    static func run(sizes: [(Int, Int)], runs: Int, filter: String?, photo: PixelBuffer) throws -> [FilterResult] {
        OpenCV.setThreads(1) // a fair comparison: one core each
        var results: [FilterResult] = []
        for (w, h) in sizes {
            var scaledPhoto = try PixelBuffer(width: w, height: h, format: .rgb24)
            try Resize.bilinear(photo, into: &scaledPhoto)
            for c in cases where filter.map({ c.name.contains($0) }) ?? true {
                let source = try PixelFormatConversion.convert(scaledPhoto, to: c.source)
                let (tw, th) = c.targetSize?(w, h) ?? (w, h)
                var ours = try PixelBuffer(width: tw, height: th, format: c.target)
                var theirs = ours.copy()
                // memcpy of the bytes the filter reads.
                let bytes = source.byteCount
                let from = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
                let to = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
                from.initializeMemory(as: UInt8.self, repeating: 1, count: bytes)
                var yuvs = ours.copy()
                let libyuv = LibYUV.run(for: c.name)
                var runners: [() throws -> Void] = [
                    { try c.framekit(source, &ours) },
                    { try c.opencv(source, &theirs) },
                    {
                        to.copyMemory(from: from, byteCount: bytes)
                        blackHole(to)
                    }
                ]
                if let libyuv { runners.append { try libyuv(source, &yuvs) } }
                let timed = try Measure.interleaved(runs: runs, runners)
                let (fk, cv, copy) = (timed[0], timed[1], timed[2])
                let yuv = libyuv == nil ? nil : timed[3]
                from.deallocate()
                to.deallocate()
                let px = Double(w * h)
                results.append(
                    FilterResult(
                        name: c.name, size: "\(w)x\(h)", framekit_ns_per_px: fk.median / px * 1e9,
                        opencv_ns_per_px: cv.median / px * 1e9, memcpy_ns_per_px: copy.median / px * 1e9,
                        ratio: fk.median / cv.median, spread: max(fk.spread, cv.spread),
                        libyuv_ns_per_px: yuv.map { $0.median / px * 1e9 }, ratio_libyuv: yuv.map { fk.median / $0.median },
                        simd: KernelDispatch.path.rawValue))
                blackHole((ours, theirs, yuvs))
            }
        }
        return results
    }
}
