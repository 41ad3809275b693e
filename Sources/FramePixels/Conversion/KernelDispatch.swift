import CCPUFeatures
import FramePixelKernels
import FramePixelKernelsAVX2

#if canImport(Glibc)
import Glibc
#endif

/// Which build of the row kernels runs: chosen once, at first use, from CPUID and the OS's
/// saved register state — AVX2 where the machine has it (nearly every x86-64 server of the last
/// decade), else the baseline x86-64 (SSE2) build; `FRAMEKIT_SIMD=baseline` forces the baseline
/// (tests and comparisons run both). AArch64 has one build, the portable code.
public enum KernelDispatch {
    public enum Path: String, Sendable {
        case baseline
        case avx2
    }

    /// The path this process uses.
    public static let path: Path = choose(
        environment: getenv("FRAMEKIT_SIMD").map { String(cString: $0) }, avx2Usable: ccpu_avx2_usable() != 0)

    /// Whether this machine could run the AVX2 kernels (whatever `FRAMEKIT_SIMD` says).
    public static var isAVX2Usable: Bool { ccpu_avx2_usable() != 0 }

    /// The choice, from `FRAMEKIT_SIMD` (`baseline`, `avx2`, or unset) and what the machine has:
    /// AVX2 is never chosen where it cannot run.
    package static func choose(environment: String?, avx2Usable: Bool) -> Path {
        #if arch(x86_64)
        if environment == "baseline" { return .baseline }
        return avx2Usable ? .avx2 : .baseline
        #else
        return .baseline
        #endif
    }

    /// RGB24 or BGRA → gray, one row.
    @inline(__always)
    static func grayRow(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, width: Int, bgra: Bool) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.GrayRows.convertRow(s, d, width: width, bgra: bgra)
        case .baseline: FramePixelKernels.GrayRows.convertRow(s, d, width: width, bgra: bgra)
        }
    }

    /// YUYV's luma bytes, one row.
    @inline(__always)
    static func lumaOfYUYV(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, width: Int) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.GrayRows.lumaOfYUYV(s, d, width: width)
        case .baseline: FramePixelKernels.GrayRows.lumaOfYUYV(s, d, width: width)
        }
    }

    /// Y'CbCr → RGB with one matrix and range, in the build that runs (each build has its own
    /// type). Only that build's value is made: the AVX2 build's own code (even its
    /// initialiser) may use instructions a baseline CPU lacks.
    enum YCbCrKernel: Sendable {
        case base(FramePixelKernels.YCbCrRows)
        case wide(FramePixelKernelsAVX2.YCbCrRows)

        init(matrix: ColorConversion.Matrix, fullRange: Bool) {
            let k = ColorConversion.Coefficients(matrix: matrix, fullRange: fullRange)
            switch path {
            case .avx2: self = .wide(.init(y: k.y, rv: k.rv, gu: k.gu, gv: k.gv, bu: k.bu, fullRange: fullRange))
            case .baseline: self = .base(.init(y: k.y, rv: k.rv, gu: k.gu, gv: k.gv, bu: k.bu, fullRange: fullRange))
            }
        }

        static let all: [YCbCrKernel] = [
            YCbCrKernel(matrix: .bt601, fullRange: false), YCbCrKernel(matrix: .bt601, fullRange: true),
            YCbCrKernel(matrix: .bt709, fullRange: false), YCbCrKernel(matrix: .bt709, fullRange: true)
        ]
        static func forMatrix(_ m: ColorConversion.Matrix, fullRange: Bool) -> YCbCrKernel {
            all[(m == .bt601 ? 0 : 2) + (fullRange ? 1 : 0)]
        }

        /// One or two rows; `cb`/`cr`: the row's chroma — none (YUYV), Cb/Cr pairs (NV12), or
        /// two planes (I420).
        @inline(__always)
        func convertRows(
            luma: UnsafePointer<UInt8>, into d: UnsafeMutablePointer<UInt8>,
            second: (UnsafePointer<UInt8>, UnsafeMutablePointer<UInt8>)?, cb: UnsafePointer<UInt8>?, cr: UnsafePointer<UInt8>?,
            width: Int, bgra: Bool
        ) {
            switch self {
            case .wide(let k): k.convertRows(luma: luma, into: d, second: second, chroma: .init(cb: cb, cr: cr), width: width, bgra: bgra)
            case .base(let k): k.convertRows(luma: luma, into: d, second: second, chroma: .init(cb: cb, cr: cr), width: width, bgra: bgra)
            }
        }
    }
}

extension KernelDispatch {
    /// A horizontal resampling pass (`HorizontalTaps`) in the build that runs.
    enum Taps: Sendable {
        case base(FramePixelKernels.HorizontalTaps)
        case wide(FramePixelKernelsAVX2.HorizontalTaps)

        init(first: [Int32], weights: [Int16], taps: Int, sourceWidth: Int, channels: Int) {
            switch path {
            case .avx2: self = .wide(.init(first: first, weights: weights, taps: taps, sourceWidth: sourceWidth, channels: channels))
            case .baseline: self = .base(.init(first: first, weights: weights, taps: taps, sourceWidth: sourceWidth, channels: channels))
            }
        }

        /// Outputs per row that the shuffle path covers (0 without it).
        var shuffled: Int {
            switch self {
            case .wide(let t): t.shuffled
            case .base(let t): t.shuffled
            }
        }

        @inline(__always)
        func sums(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int32>) {
            switch self {
            case .wide(let t): t.sums(row, into: out)
            case .base(let t): t.sums(row, into: out)
            }
        }

        @inline(__always)
        func sumsShifted(_ row: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<Int16>) {
            switch self {
            case .wide(let t): t.sumsShifted(row, into: out)
            case .base(let t): t.sumsShifted(row, into: out)
            }
        }
    }

    /// `ResizeRows.blend` (bilinear's vertical pass).
    @inline(__always)
    static func blend(
        _ top: UnsafePointer<Int16>, _ a: Int16, _ bottom: UnsafePointer<Int16>, _ b: Int16,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ResizeRows.blend(top, a, bottom, b, into: out, count: count)
        case .baseline: FramePixelKernels.ResizeRows.blend(top, a, bottom, b, into: out, count: count)
        }
    }

    /// `ThreeQuarterRows.resize` (bilinear by exactly 3/4, three output rows from four).
    @inline(__always)
    static func threeQuarters(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, _ r2: UnsafePointer<UInt8>, _ r3: UnsafePointer<UInt8>,
        into o0: UnsafeMutablePointer<UInt8>, _ o1: UnsafeMutablePointer<UInt8>, _ o2: UnsafeMutablePointer<UInt8>,
        count: Int, scratch: UnsafeMutablePointer<UInt16>
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ThreeQuarterRows.resize(r0, r1, r2, r3, into: o0, o1, o2, count: count, scratch: scratch)
        case .baseline: FramePixelKernels.ThreeQuarterRows.resize(r0, r1, r2, r3, into: o0, o1, o2, count: count, scratch: scratch)
        }
    }

    /// `ThreeEighthRows.resize` (area by exactly 3/8, three output rows from eight): the AVX2
    /// build's only — the baseline build's general area resize gives the same bytes faster than
    /// the portable code, which is there off x86 and as the reference.
    @inline(__always)
    static func threeEighths(
        _ rows: UnsafePointer<UInt8>, rowStride: Int, into out: UnsafeMutablePointer<UInt8>, outStride: Int, count: Int
    ) {
        FramePixelKernelsAVX2.ThreeEighthRows.resize(rows, rowStride: rowStride, into: out, outStride: outStride, count: count)
    }

    /// `ResizeRows.halvePlane` (the 2x2 box mean of a plane).
    @inline(__always)
    static func halvePlane(
        _ source: UnsafePointer<UInt8>, sourceStride: Int, into out: UnsafeMutablePointer<UInt8>, outStride: Int, count: Int, rows: Int
    ) {
        switch path {
        case .avx2:
            FramePixelKernelsAVX2.ResizeRows.halvePlane(
                source, sourceStride: sourceStride, into: out, outStride: outStride, count: count, rows: rows)
        case .baseline:
            FramePixelKernels.ResizeRows.halvePlane(
                source, sourceStride: sourceStride, into: out, outStride: outStride, count: count, rows: rows)
        }
    }

    /// `ResizeRows.halvePixels` (the 2x2 box mean of 3- and 4-byte pixels).
    @inline(__always)
    static func halvePixels(
        _ r0: UnsafePointer<UInt8>, _ r1: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, count: Int, channels: Int,
        sums: UnsafeMutablePointer<UInt16>
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ResizeRows.halvePixels(r0, r1, into: out, count: count, channels: channels, sums: sums)
        case .baseline: FramePixelKernels.ResizeRows.halvePixels(r0, r1, into: out, count: count, channels: channels, sums: sums)
        }
    }

    /// `ResizeRows.accumulate` and `finish` (an area resize's vertical pass).
    @inline(__always)
    static func accumulate(_ row: UnsafePointer<Int32>, weight: UInt32, into acc: UnsafeMutablePointer<UInt32>, count: Int, start: Bool) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ResizeRows.accumulate(row, weight: weight, into: acc, count: count, start: start)
        case .baseline: FramePixelKernels.ResizeRows.accumulate(row, weight: weight, into: acc, count: count, start: start)
        }
    }

    /// `ResizeRows.weightedRows` (1 to 4 rows).
    @inline(__always)
    static func weightedRows(
        _ rows: UnsafePointer<UnsafePointer<Int32>>, _ weights: UnsafePointer<UInt32>, taps: Int,
        into out: UnsafeMutablePointer<UInt8>, count: Int
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ResizeRows.weightedRows(rows, weights, taps: taps, into: out, count: count)
        case .baseline: FramePixelKernels.ResizeRows.weightedRows(rows, weights, taps: taps, into: out, count: count)
        }
    }

    @inline(__always)
    static func finish(_ acc: UnsafePointer<UInt32>, into out: UnsafeMutablePointer<UInt8>, count: Int) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.ResizeRows.finish(acc, into: out, count: count)
        case .baseline: FramePixelKernels.ResizeRows.finish(acc, into: out, count: count)
        }
    }

    /// `MirrorRows.reverse`.
    @inline(__always)
    static func mirrorRow(_ s: UnsafeRawPointer, _ d: UnsafeMutableRawPointer, count: Int, bytesPerPixel: Int) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.MirrorRows.reverse(s, d, count: count, bytesPerPixel: bytesPerPixel)
        case .baseline: FramePixelKernels.MirrorRows.reverse(s, d, count: count, bytesPerPixel: bytesPerPixel)
        }
    }
}

extension KernelDispatch {
    /// FrameProcessors' filter rows (`FilterRows`) in the build that runs.
    package enum Blur: Sendable {
        case box3, box5, gaussian3, gaussian5

        /// Rows each output row reads (3 or 5).
        package var taps: Int { base.taps }

        var base: FramePixelKernels.FilterRows.Blur {
            switch self {
            case .box3: .box3
            case .box5: .box5
            case .gaussian3: .gaussian3
            case .gaussian5: .gaussian5
            }
        }

        var wide: FramePixelKernelsAVX2.FilterRows.Blur {
            switch self {
            case .box3: .box3
            case .box5: .box5
            case .gaussian3: .gaussian3
            case .gaussian5: .gaussian5
            }
        }
    }

    package static func blurHorizontal(_ blur: Blur, _ p: UnsafePointer<UInt8>, into out: UnsafeMutablePointer<UInt16>, width: Int) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.FilterRows.horizontal(blur.wide, p, into: out, width: width)
        case .baseline: FramePixelKernels.FilterRows.horizontal(blur.base, p, into: out, width: width)
        }
    }

    package static func blurVertical(
        _ blur: Blur,
        _ rows: (UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>, UnsafePointer<UInt16>),
        into out: UnsafeMutablePointer<UInt8>, width: Int
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.FilterRows.vertical(blur.wide, rows, into: out, width: width)
        case .baseline: FramePixelKernels.FilterRows.vertical(blur.base, rows, into: out, width: width)
        }
    }

    package static func sobelHorizontal(
        _ p: UnsafePointer<UInt8>, difference: UnsafeMutablePointer<Int16>, smooth: UnsafeMutablePointer<Int16>, width: Int
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.FilterRows.sobelHorizontal(p, difference: difference, smooth: smooth, width: width)
        case .baseline: FramePixelKernels.FilterRows.sobelHorizontal(p, difference: difference, smooth: smooth, width: width)
        }
    }

    package static func sobelMagnitude(
        up: (UnsafePointer<Int16>, UnsafePointer<Int16>), middle: UnsafePointer<Int16>, down: (UnsafePointer<Int16>, UnsafePointer<Int16>),
        into out: UnsafeMutablePointer<UInt8>, width: Int
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.FilterRows.sobelMagnitude(up: up, middle: middle, down: down, into: out, width: width)
        case .baseline: FramePixelKernels.FilterRows.sobelMagnitude(up: up, middle: middle, down: down, into: out, width: width)
        }
    }

    package static func threshold(
        _ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, count: Int, threshold: UInt8, maxValue: UInt8
    ) {
        switch path {
        case .avx2: FramePixelKernelsAVX2.FilterRows.threshold(s, d, count: count, threshold: threshold, maxValue: maxValue)
        case .baseline: FramePixelKernels.FilterRows.threshold(s, d, count: count, threshold: threshold, maxValue: maxValue)
        }
    }
}

extension KernelDispatch {
    /// `QuarterTurn.blocks`: a tile's whole blocks; returns how far they reach.
    @inline(__always)
    static func quarterTurnBlocks(
        _ s: UnsafePointer<UInt8>, _ sStride: Int, _ d: UnsafeMutablePointer<UInt8>, _ dStride: Int,
        x: Int, y: Int, xEnd: Int, yEnd: Int, width: Int, height: Int, clockwise: Bool
    ) -> (y: Int, x: Int) {
        switch path {
        case .avx2:
            FramePixelKernelsAVX2.QuarterTurn.blocks(
                s, sStride, d, dStride, x: x, y: y, xEnd: xEnd, yEnd: yEnd, width: width, height: height, clockwise: clockwise)
        case .baseline:
            FramePixelKernels.QuarterTurn.blocks(
                s, sStride, d, dStride, x: x, y: y, xEnd: xEnd, yEnd: yEnd, width: width, height: height, clockwise: clockwise)
        }
    }
}

extension KernelDispatch {
    /// RGB24/BGRA → Y'CbCr 4:2:0 with one matrix and range, in the build that runs (only
    /// that build's value made, as for `YCbCrKernel`).
    enum RGBToYCbCrKernel: Sendable {
        case base(FramePixelKernels.RGBToYCbCrRows)
        case wide(FramePixelKernelsAVX2.RGBToYCbCrRows)

        init(matrix: ColorConversion.Matrix, fullRange: Bool) {
            let (kr, kb) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
            switch path {
            case .avx2: self = .wide(.init(kr: kr, kb: kb, fullRange: fullRange))
            case .baseline: self = .base(.init(kr: kr, kb: kb, fullRange: fullRange))
            }
        }

        static let all: [RGBToYCbCrKernel] = [
            RGBToYCbCrKernel(matrix: .bt601, fullRange: false), RGBToYCbCrKernel(matrix: .bt601, fullRange: true),
            RGBToYCbCrKernel(matrix: .bt709, fullRange: false), RGBToYCbCrKernel(matrix: .bt709, fullRange: true)
        ]
        static func forMatrix(_ m: ColorConversion.Matrix, fullRange: Bool) -> RGBToYCbCrKernel {
            all[(m == .bt601 ? 0 : 2) + (fullRange ? 1 : 0)]
        }

        /// `cr` nil: `cb` is NV12's interleaved row.
        @inline(__always)
        func convertRows(
            _ top: UnsafePointer<UInt8>, _ bottom: UnsafePointer<UInt8>, lumaTop: UnsafeMutablePointer<UInt8>,
            lumaBottom: UnsafeMutablePointer<UInt8>?, cb: UnsafeMutablePointer<UInt8>, cr: UnsafeMutablePointer<UInt8>?, width: Int,
            bgra: Bool
        ) {
            let chroma: (FramePixelKernels.RGBToYCbCrRows.ChromaOut, FramePixelKernelsAVX2.RGBToYCbCrRows.ChromaOut) =
                if let cr { (.planar(cb, cr), .planar(cb, cr)) } else { (.interleaved(cb), .interleaved(cb)) }
            switch self {
            case .wide(let k):
                k.convertRows(top, bottom, lumaTop: lumaTop, lumaBottom: lumaBottom, chroma: chroma.1, width: width, bgra: bgra)
            case .base(let k):
                k.convertRows(top, bottom, lumaTop: lumaTop, lumaBottom: lumaBottom, chroma: chroma.0, width: width, bgra: bgra)
            }
        }
    }
}
