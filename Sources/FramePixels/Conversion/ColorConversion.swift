import FrameCore

/// Colour-space conversions between FrameKit's pixel formats.
///
/// Gray from RGB uses BT.601 luma weights in 15-bit fixed point, as OpenCV's
/// `cvtColor(…2GRAY)` (pixel-exact); Y'CbCr → RGB uses OpenCV's own BT.601 video-range gains
/// (and the same arithmetic for BT.709 and full range) rounded to 16-bit fixed point, so that
/// SSE2 converts eight pixels per instruction: within 1 LSB of `cvtColor(COLOR_YUV2RGB_NV12)`
/// (see FramePixelKernels' `YCbCrRows`).
public enum ColorConversion {
    public enum Matrix: String, Sendable, CaseIterable { case bt601, bt709 }

    /// Fixed-point Y'CbCr → RGB gains at scale 2^20 (OpenCV's scale), from which `YCbCrRows` rounds its own.
    struct Coefficients: Sendable {
        let y: Int32, rv: Int32, gu: Int32, gv: Int32, bu: Int32

        init(matrix: Matrix, fullRange: Bool) {
            if matrix == .bt601 && !fullRange {
                // OpenCV's ITUR_BT_601_* constants, so results stay within 1 LSB of it.
                (y, rv, gu, gv, bu) = (1_220_542, 1_673_527, -409_993, -852_492, 2_116_026)
            } else {
                let (kr, kb): (Double, Double) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
                let kg = 1 - kr - kb
                let ys = fullRange ? 1.0 : 255.0 / 219.0
                let cs = fullRange ? 1.0 : 255.0 / 224.0
                let s = Double(1 << 20)
                y = Int32((ys * s).rounded())
                rv = Int32((2 * (1 - kr) * cs * s).rounded())
                gu = Int32((-2 * (1 - kb) * kb / kg * cs * s).rounded())
                gv = Int32((-2 * (1 - kr) * kr / kg * cs * s).rounded())
                bu = Int32((2 * (1 - kb) * cs * s).rounded())
            }
        }
    }

    // MARK: To gray

    /// Gray (luma) from any format into a `PixelFormat/gray8` buffer of the same size. For
    /// Y'CbCr formats this is the luma plane as it is (no range change), as OpenCV does.
    public static func convertToGray(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireSameSize(source, destination, format: .gray8)
        let format = source.format
        PlaneRows.forEach(source, &destination) { s, d, w in
            switch format {
            case .gray8, .nv12VideoRange, .nv12FullRange, .i420: d.update(from: s, count: w)
            case .yuyv: KernelDispatch.lumaOfYUYV(s, d, width: w)
            case .bgra32: KernelDispatch.grayRow(s, d, width: w, bgra: true)
            case .rgb24: KernelDispatch.grayRow(s, d, width: w, bgra: false)
            }
        }
    }

    // MARK: To RGB

    /// Converts NV12, I420 or YUYV to RGB24 or BGRA (alpha 255); RGB24/BGRA/GRAY8 sources are
    /// repacked. `matrix` and the source's range (NV12 full range is full; the others are video
    /// range, as cameras deliver them) pick the coefficients. Gray targets take the luma.
    public static func convert(
        _ source: PixelBuffer, into destination: inout PixelBuffer,
        matrix: Matrix = .bt601
    ) throws(PixelBufferError) {
        try requireSameSize(source, destination)
        if destination.format == .gray8 { return try convertToGray(source, into: &destination) }
        guard destination.format == .rgb24 || destination.format == .bgra32 else {
            throw .unsupportedFormat(destination.format, operation: "conversion target (use rgb24, bgra32 or gray8)")
        }
        switch source.format {
        case .rgb24, .bgra32, .gray8:
            copyRGB(source, into: &destination)
        case .nv12VideoRange, .nv12FullRange, .i420, .yuyv:
            yCbCrToRGB(source, into: &destination, KernelDispatch.YCbCrKernel.forMatrix(matrix, fullRange: source.format == .nv12FullRange))
        }
    }

    // MARK: To Y'CbCr

    /// Whether ``convertToYCbCr(_:into:matrix:)`` converts `source` to `target`: RGB24 or BGRA
    /// to NV12 (either range), I420 or YUYV.
    public static func convertsToYCbCr(from source: PixelFormat, to target: PixelFormat) -> Bool {
        (source == .rgb24 || source == .bgra32) && target.isYCbCr
    }

    /// Converts RGB24 or BGRA to NV12 (video or full range), I420 or YUYV (video range) of the
    /// same size: luma per pixel, chroma as the mean of each 2x2 block (of each pixel pair for
    /// YUYV's 4:2:2) (`RGBToYCbCrRows`), with `matrix`'s coefficients — BT.601 video range:
    /// Y' = 16 + (65.481·R + 128.553·G + 24.966·B) / 255, to within 1 of the exact value (15-bit
    /// luma and 14-bit chroma weights).
    public static func convertToYCbCr(
        _ source: PixelBuffer, into destination: inout PixelBuffer, matrix: Matrix = .bt601
    ) throws(PixelBufferError) {
        try requireSameSize(source, destination)
        guard source.format == .rgb24 || source.format == .bgra32 else {
            throw .unsupportedFormat(source.format, operation: "RGB → Y'CbCr conversion source (use rgb24 or bgra32)")
        }
        let target = destination.format
        guard target.isYCbCr else {
            throw .unsupportedFormat(target, operation: "RGB → Y'CbCr conversion target (use nv12, i420 or yuyv)")
        }
        let k = KernelDispatch.RGBToYCbCrKernel.forMatrix(matrix, fullRange: target == .nv12FullRange)
        let (w, h) = (source.width, source.height)
        let bgra = source.format == .bgra32
        if target == .yuyv { return rgbToYUYV(source, into: &destination, k, bgra: bgra) }
        let planar = target == .i420
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutablePlanes { planes in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let (y, lp) = (planes[0].base.assumingMemoryBound(to: UInt8.self), planes[0].plane.bytesPerRow)
                let (cb, cp) = (planes[1].base.assumingMemoryBound(to: UInt8.self), planes[1].plane.bytesPerRow)
                let (cr, rp) = planar ? (planes[2].base.assumingMemoryBound(to: UInt8.self), planes[2].plane.bytesPerRow) : (cb, cp)
                for row in stride(from: 0, to: h, by: 2) {
                    let next = min(row + 1, h - 1)
                    k.convertRows(
                        s + row * sp.bytesPerRow, s + next * sp.bytesPerRow, lumaTop: y + row * lp,
                        lumaBottom: next > row ? y + next * lp : nil, cb: cb + (row / 2) * cp,
                        cr: planar ? cr + (row / 2) * rp : nil, width: w, bgra: bgra)
                }
            }
        }
    }

    /// 4:2:2: each row as a 2x2 block row of itself (its pixel pairs' means), then interleaved.
    static func rgbToYUYV(_ source: PixelBuffer, into destination: inout PixelBuffer, _ k: KernelDispatch.RGBToYCbCrKernel, bgra: Bool) {
        let w = source.width
        var scratch = [UInt8](repeating: 0, count: 2 * w)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                scratch.withUnsafeMutableBufferPointer { rows in
                    let (y, cb, cr) = (rows.baseAddress!, rows.baseAddress! + w, rows.baseAddress! + w + w / 2)
                    for row in 0..<source.height {
                        let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * sp.bytesPerRow
                        k.convertRows(s, s, lumaTop: y, lumaBottom: nil, cb: cb, cr: cr, width: w, bgra: bgra)
                        let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * dp.bytesPerRow
                        for pair in 0..<(w / 2) {
                            out[4 &* pair] = y[2 &* pair]
                            out[4 &* pair &+ 1] = cb[pair]
                            out[4 &* pair &+ 2] = y[2 &* pair &+ 1]
                            out[4 &* pair &+ 3] = cr[pair]
                        }
                    }
                }
            }
        }
    }

    static func yCbCrToRGB(_ source: PixelBuffer, into destination: inout PixelBuffer, _ k: KernelDispatch.YCbCrKernel) {
        let w = source.width
        let h = source.height
        let format = source.format
        let bgra = destination.format == .bgra32
        if format == .yuyv {
            // YUYV rows share no chroma: rows without padding go as one long row (one loop start
            // and one tail per image), as `PlaneRows` gives them.
            PlaneRows.forEach(source, &destination) { s, d, width in
                k.convertRows(luma: s, into: d, second: nil, cb: nil, cr: nil, width: width, bgra: bgra)
            }
            return
        }
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            source.withUnsafeBytes(ofPlane: 0) { yb, yp in
                let luma = yb.baseAddress!.assumingMemoryBound(to: UInt8.self)
                // 4:2:0: each chroma row serves two luma rows. The SSE2 build converts them together
                // (the chroma terms computed once); the AVX2 build one at a time, which measured
                // faster at 1080p (1.45x → 1.1x libyuv's time to BGRA): two output streams at once
                // cost more than the chroma arithmetic they save.
                let together = KernelDispatch.path == .baseline
                source.withUnsafeBytes(ofPlane: 1) { cb, cp in
                    source.withUnsafeBytes(ofPlane: format == .i420 ? 2 : 1) { cr, rp in
                        for row in stride(from: 0, to: h, by: 2) {
                            let u = cb.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row / 2) * cp.bytesPerRow
                            let v = format == .i420 ? cr.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row / 2) * rp.bytesPerRow : nil
                            let second =
                                row + 1 < h
                                ? (UnsafePointer(luma + (row + 1) * yp.bytesPerRow), out + (row + 1) * dp.bytesPerRow) : nil
                            k.convertRows(
                                luma: luma + row * yp.bytesPerRow, into: out + row * dp.bytesPerRow, second: together ? second : nil,
                                cb: u, cr: v, width: w, bgra: bgra)
                            if !together, let (l, o) = second {
                                k.convertRows(luma: l, into: o, second: nil, cb: u, cr: v, width: w, bgra: bgra)
                            }
                        }
                    }
                }
            }
        }
    }

    static func copyRGB(_ source: PixelBuffer, into destination: inout PixelBuffer) {
        let inStride = source.plane(0).bytesPerPixel
        let (sr, sb) = source.format == .bgra32 ? (2, 0) : (0, 2)
        let outStride = destination.plane(0).bytesPerPixel
        let (dr, db) = destination.format == .rgb24 ? (0, 2) : (2, 0)
        let w = source.width
        let h = source.height
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                for row in 0..<h {
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * sp.bytesPerRow
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * dp.bytesPerRow
                    for x in 0..<w {
                        let i = x &* inStride
                        let o = x &* outStride
                        if inStride == 1 {
                            d[o] = s[i]
                            d[o + 1] = s[i]
                            d[o + 2] = s[i]
                        } else {
                            d[o + dr] = s[i + sr]
                            d[o + 1] = s[i + 1]
                            d[o + db] = s[i + sb]
                        }
                        if outStride == 4 { d[o + 3] = 255 }
                    }
                }
            }
        }
    }

    static func requireSameSize(_ a: PixelBuffer, _ b: PixelBuffer, format: PixelFormat) throws(PixelBufferError) {
        guard b.format == format else { throw .unsupportedFormat(b.format, operation: "destination (needs \(format))") }
        try requireSameSize(a, b)
    }

    static func requireSameSize(_ a: PixelBuffer, _ b: PixelBuffer) throws(PixelBufferError) {
        guard a.width == b.width, a.height == b.height else {
            throw .sizeMismatch(expected: "\(a.width)x\(a.height)", actual: "\(b.width)x\(b.height)")
        }
    }
}
