import FrameCore

/// Colour-space conversions between FrameKit's pixel formats.
///
/// Gray from RGB uses BT.601 luma weights in 15-bit fixed point, as OpenCV's
/// `cvtColor(…2GRAY)`; Y'CbCr → RGB uses 20-bit fixed point, with OpenCV's own constants for
/// BT.601 video range (pixel-exact against `cvtColor(COLOR_YUV2RGB_NV12)`), and the same
/// arithmetic for BT.709 and full range.
public enum ColorConversion {
    public enum Matrix: String, Sendable, CaseIterable { case bt601, bt709 }

    /// Fixed-point Y'CbCr → RGB coefficients (scale 2^20).
    @usableFromInline
    struct Coefficients: Sendable {
        @usableFromInline var y: Int32, rv: Int32, gu: Int32, gv: Int32, bu: Int32, yOffset: Int32

        init(matrix: Matrix, fullRange: Bool) {
            if matrix == .bt601 && !fullRange {
                // OpenCV's ITUR_BT_601_* constants, so results match it exactly.
                (y, rv, gu, gv, bu) = (1_220_542, 1_673_527, -409_993, -852_492, 2_116_026)
            } else {
                let (kr, kb): (Double, Double) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
                let kg = 1 - kr - kb
                let ys = fullRange ? 1.0 : 255.0 / 219.0, cs = fullRange ? 1.0 : 255.0 / 224.0
                let s = Double(1 << 20)
                y = Int32((ys * s).rounded())
                rv = Int32((2 * (1 - kr) * cs * s).rounded())
                gu = Int32((-2 * (1 - kb) * kb / kg * cs * s).rounded())
                gv = Int32((-2 * (1 - kr) * kr / kg * cs * s).rounded())
                bu = Int32((2 * (1 - kb) * cs * s).rounded())
            }
            yOffset = fullRange ? 0 : 16
        }
    }

    /// The fixed-point terms of ``Coefficients`` tabulated per 8-bit input (the same integers,
    /// so results are unchanged), and a clamp table for the final >> 20: the conversion loop
    /// becomes lookups and adds.
    final class Tables: Sendable {
        let luma: [Int32], rv: [Int32], gu: [Int32], gv: [Int32], bu: [Int32]
        /// Index (x >> 20) + 1024 → the value clamped to 0…255 (every sum of the terms is within ±1024).
        let clamp: [UInt8]
        init(_ k: Coefficients) {
            luma = (0..<256).map { max(0, Int32($0) &- k.yOffset) &* k.y }
            rv = (0..<256).map { k.rv &* (Int32($0) &- 128) &+ (1 << 19) }
            gu = (0..<256).map { k.gu &* (Int32($0) &- 128) &+ (1 << 19) }
            gv = (0..<256).map { k.gv &* (Int32($0) &- 128) }
            bu = (0..<256).map { k.bu &* (Int32($0) &- 128) &+ (1 << 19) }
            clamp = (0..<2048).map { UInt8(clamping: $0 - 1024) }
        }
        static let all: [Tables] = [
            Tables(Coefficients(matrix: .bt601, fullRange: false)), Tables(Coefficients(matrix: .bt601, fullRange: true)),
            Tables(Coefficients(matrix: .bt709, fullRange: false)), Tables(Coefficients(matrix: .bt709, fullRange: true)),
        ]
        static func forMatrix(_ m: Matrix, fullRange: Bool) -> Tables { all[(m == .bt601 ? 0 : 2) + (fullRange ? 1 : 0)] }
    }

    // MARK: To gray

    /// Gray (luma) from any format into a ``PixelFormat/gray8`` buffer of the same size. For
    /// Y'CbCr formats this is the luma plane as it is (no range change), as OpenCV does.
    public static func convertToGray(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        try requireSameSize(source, destination, format: .gray8)
        let w = source.width, h = source.height, format = source.format
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                let input = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for row in 0..<h {
                    let s = input + row * sp.bytesPerRow, d = out + row * dp.bytesPerRow
                    switch format {
                    case .gray8, .nv12VideoRange, .nv12FullRange, .i420: d.update(from: s, count: w)
                    case .yuyv: lumaFromYUYV(s, d, w)
                    case .bgra32: grayFromBGRA(s, d, w)
                    case .rgb24: grayFromRGB(s, d, w)
                    }
                }
            }
        }
    }

    // Each pixel read as one contiguous word (16-bit YUYV pair half, 32-bit BGRA) so the
    // compiler vectorises the loop.
    @inlinable
    static func lumaFromYUYV(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ w: Int) {
        let words = UnsafeRawPointer(s)
        for x in 0..<w { d[x] = UInt8(truncatingIfNeeded: words.loadUnaligned(fromByteOffset: 2 &* x, as: UInt16.self)) }
    }

    // Y = (9798 R + 19235 G + 3735 B + 16384) >> 15: the weights OpenCV 4 uses, so results match it.
    @inlinable
    static func grayFromBGRA(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ w: Int) {
        let words = UnsafeRawPointer(s)
        for x in 0..<w {
            let v = words.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self)
            let b = v & 0xFF, g = (v &>> 8) & 0xFF, r = (v &>> 16) & 0xFF
            d[x] = UInt8(truncatingIfNeeded: (r &* 9798 &+ g &* 19235 &+ b &* 3735 &+ 16384) &>> 15)
        }
    }

    @inlinable
    static func grayFromRGB(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ w: Int) {
        for x in 0..<w {
            let p = s + 3 &* x
            d[x] = UInt8(truncatingIfNeeded: (UInt32(p[0]) &* 9798 &+ UInt32(p[1]) &* 19235 &+ UInt32(p[2]) &* 3735 &+ 16384) &>> 15)
        }
    }

    // MARK: To RGB

    /// Converts NV12, I420 or YUYV to RGB24 or BGRA (alpha 255); RGB24/BGRA/GRAY8 sources are
    /// repacked. `matrix` and the source's range (NV12 full range is full; the others are video
    /// range, as cameras deliver them) pick the coefficients. Gray targets take the luma.
    public static func convert(_ source: PixelBuffer, into destination: inout PixelBuffer,
                               matrix: Matrix = .bt601) throws(PixelBufferError) {
        guard source.width == destination.width, source.height == destination.height else {
            throw .sizeMismatch(expected: "\(source.width)x\(source.height)", actual: "\(destination.width)x\(destination.height)")
        }
        if destination.format == .gray8 { return try convertToGray(source, into: &destination) }
        guard destination.format == .rgb24 || destination.format == .bgra32 else {
            throw .unsupportedFormat(destination.format, operation: "conversion target (use rgb24, bgra32 or gray8)")
        }
        switch source.format {
        case .rgb24, .bgra32, .gray8:
            copyRGB(source, into: &destination)
        case .nv12VideoRange, .nv12FullRange, .i420, .yuyv:
            yCbCrToRGB(source, into: &destination, Tables.forMatrix(matrix, fullRange: source.format == .nv12FullRange))
        }
    }

    static func yCbCrToRGB(_ source: PixelBuffer, into destination: inout PixelBuffer, _ tables: Tables) {
        let w = source.width, h = source.height, format = source.format
        let bgra = destination.format == .bgra32
        tables.luma.withUnsafeBufferPointer { l in tables.rv.withUnsafeBufferPointer { rv in tables.gu.withUnsafeBufferPointer { gu in
        tables.gv.withUnsafeBufferPointer { gv in tables.bu.withUnsafeBufferPointer { bu in tables.clamp.withUnsafeBufferPointer { cl in
        let k = Lookup(luma: l.baseAddress!, rv: rv.baseAddress!, gu: gu.baseAddress!, gv: gv.baseAddress!, bu: bu.baseAddress!,
                       clamp: cl.baseAddress! + 1024)
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            let out = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
            source.withUnsafeBytes(ofPlane: 0) { yb, yp in
                let luma = yb.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for row in 0..<h {
                    let d = out + row * dp.bytesPerRow
                    switch format {
                    case .yuyv:
                        let s = luma + row * yp.bytesPerRow
                        for pair in 0..<w / 2 {
                            let p = s + 4 &* pair
                            pixelPair(p[0], p[2], p[1], p[3], d + (bgra ? 8 : 6) &* pair, bgra, k)
                        }
                    case .i420:
                        let y = luma + row * yp.bytesPerRow
                        source.withUnsafeBytes(ofPlane: 1) { ub, up in
                            source.withUnsafeBytes(ofPlane: 2) { vb, vp in
                                let u = ub.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row / 2) * up.bytesPerRow
                                let v = vb.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row / 2) * vp.bytesPerRow
                                for pair in 0..<w / 2 {
                                    pixelPair(y[2 &* pair], y[2 &* pair &+ 1], u[pair], v[pair], d + (bgra ? 8 : 6) &* pair, bgra, k)
                                }
                            }
                        }
                    default:
                        let y = luma + row * yp.bytesPerRow
                        source.withUnsafeBytes(ofPlane: 1) { cb, cp in
                            let uv = cb.baseAddress!.assumingMemoryBound(to: UInt8.self) + (row / 2) * cp.bytesPerRow
                            for pair in 0..<w / 2 {
                                pixelPair(y[2 &* pair], y[2 &* pair &+ 1], uv[2 &* pair], uv[2 &* pair &+ 1],
                                          d + (bgra ? 8 : 6) &* pair, bgra, k)
                            }
                        }
                    }
                }
            }
        }
        } } } } } }
    }

    /// Pointers into ``Tables`` for the conversion loop.
    struct Lookup {
        let luma: UnsafePointer<Int32>, rv: UnsafePointer<Int32>, gu: UnsafePointer<Int32>
        let gv: UnsafePointer<Int32>, bu: UnsafePointer<Int32>, clamp: UnsafePointer<UInt8>
    }

    /// Two horizontally adjacent pixels sharing one chroma sample.
    @inline(__always)
    static func pixelPair(_ y0: UInt8, _ y1: UInt8, _ u: UInt8, _ v: UInt8, _ d: UnsafeMutablePointer<UInt8>,
                          _ bgra: Bool, _ k: Lookup) {
        let ruv = k.rv[Int(v)], guv = k.gu[Int(u)] &+ k.gv[Int(v)], buv = k.bu[Int(u)]
        let a = k.luma[Int(y0)], b = k.luma[Int(y1)]
        @inline(__always) func c(_ x: Int32) -> UInt8 { k.clamp[Int(x &>> 20)] }
        if bgra {
            d[0] = c(a &+ buv); d[1] = c(a &+ guv); d[2] = c(a &+ ruv); d[3] = 255
            d[4] = c(b &+ buv); d[5] = c(b &+ guv); d[6] = c(b &+ ruv); d[7] = 255
        } else {
            d[0] = c(a &+ ruv); d[1] = c(a &+ guv); d[2] = c(a &+ buv)
            d[3] = c(b &+ ruv); d[4] = c(b &+ guv); d[5] = c(b &+ buv)
        }
    }

    static func copyRGB(_ source: PixelBuffer, into destination: inout PixelBuffer) {
        let inStride = source.plane(0).bytesPerPixel
        let (sr, sb) = source.format == .bgra32 ? (2, 0) : (0, 2)
        let outStride = destination.plane(0).bytesPerPixel
        let (dr, db) = destination.format == .rgb24 ? (0, 2) : (2, 0)
        let w = source.width, h = source.height
        destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
            source.withUnsafeBytes(ofPlane: 0) { src, sp in
                for row in 0..<h {
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * sp.bytesPerRow
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * dp.bytesPerRow
                    for x in 0..<w {
                        let i = x &* inStride, o = x &* outStride
                        if inStride == 1 {
                            d[o] = s[i]; d[o + 1] = s[i]; d[o + 2] = s[i]
                        } else {
                            d[o + dr] = s[i + sr]; d[o + 1] = s[i + 1]; d[o + db] = s[i + sb]
                        }
                        if outStride == 4 { d[o + 3] = 255 }
                    }
                }
            }
        }
    }

    static func requireSameSize(_ a: PixelBuffer, _ b: PixelBuffer, format: PixelFormat) throws(PixelBufferError) {
        guard b.format == format else { throw .unsupportedFormat(b.format, operation: "destination (needs \(format))") }
        guard a.width == b.width, a.height == b.height else {
            throw .sizeMismatch(expected: "\(a.width)x\(a.height)", actual: "\(b.width)x\(b.height)")
        }
    }
}
