import FrameCore

/// Full-range Y, Cb and Cr planes at some chroma subsampling: the form libjpeg-turbo decodes to
/// and encodes from, and the bridge to FrameKit's NV12, I420 and YUYV buffers.
public struct PlanarYCbCr: Sendable {
    public var width: Int
    public var height: Int
    public var chromaWidth: Int
    public var chromaHeight: Int
    public var y: [UInt8]
    public var cb: [UInt8]
    public var cr: [UInt8]

    public init(width: Int, height: Int, chromaWidth: Int, chromaHeight: Int) {
        self.width = width
        self.height = height
        self.chromaWidth = chromaWidth
        self.chromaHeight = chromaHeight
        y = [UInt8](repeating: 0, count: width * height)
        cb = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
        cr = [UInt8](repeating: 128, count: chromaWidth * chromaHeight)
    }

    // Video range ↔ full range (BT.601/709 share these): luma 16–235, chroma 16–240.
    static let lumaToVideo: [UInt8] = (0..<256).map { UInt8((Double($0) * 219 / 255 + 16).rounded()) }
    static let chromaToVideo: [UInt8] = (0..<256).map { UInt8((Double($0) * 224 / 255 + 16).rounded()) }
    static let lumaToFull: [UInt8] = (0..<256).map { UInt8(min(255, max(0, ((Double($0) - 16) * 255 / 219).rounded()))) }
    static let chromaToFull: [UInt8] = (0..<256).map { UInt8(min(255, max(0, ((Double($0) - 16) * 255 / 224).rounded()))) }

    /// Writes into a NV12, I420 or YUYV buffer of the same size, mapping to video range where
    /// the format asks for it (NV12 video range; I420 and YUYV are treated as video range too,
    /// as cameras deliver them).
    public func write(into buffer: inout PixelBuffer) throws(PixelBufferError) {
        guard buffer.width == width, buffer.height == height else {
            throw .sizeMismatch(expected: "\(width)x\(height)", actual: "\(buffer.width)x\(buffer.height)")
        }
        guard buffer.format.isYCbCr else { throw .unsupportedFormat(buffer.format, operation: "writing Y'CbCr planes") }
        let video = buffer.format != .nv12FullRange
        let lumaMap = video ? Self.lumaToVideo : Self.identity
        let chromaMap = video ? Self.chromaToVideo : Self.identity
        // Output chroma grid, and for each of its columns/rows the nearest sample of ours.
        let (ow, oh) = buffer.format == .yuyv ? (width / 2, height) : (width / 2, height / 2)
        let xs = (0..<ow).map { ow == chromaWidth ? $0 : min(chromaWidth - 1, $0 * chromaWidth / ow) }
        let ys = (0..<oh).map { oh == chromaHeight ? $0 : min(chromaHeight - 1, $0 * chromaHeight / oh) }
        let format = buffer.format
        let w = width
        let h = height
        let cw = chromaWidth
        lumaMap.withUnsafeBufferPointer { lm in
            chromaMap.withUnsafeBufferPointer { cm in
                y.withUnsafeBufferPointer { yp in
                    cb.withUnsafeBufferPointer { bp in
                        cr.withUnsafeBufferPointer { rp in
                            if format == .yuyv {
                                buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, p in
                                    for row in 0..<h {
                                        let d = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * p.bytesPerRow
                                        let src = yp.baseAddress! + row * w
                                        let c = ys[row] * cw
                                        for pair in 0..<ow {
                                            let i = c + xs[pair]
                                            d[4 * pair] = lm[Int(src[2 * pair])]
                                            d[4 * pair + 1] = cm[Int(bp[i])]
                                            d[4 * pair + 2] = lm[Int(src[2 * pair + 1])]
                                            d[4 * pair + 3] = cm[Int(rp[i])]
                                        }
                                    }
                                }
                                return
                            }
                            buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, p in
                                for row in 0..<h {
                                    let d = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * p.bytesPerRow
                                    let src = yp.baseAddress! + row * w
                                    if video { for col in 0..<w { d[col] = lm[Int(src[col])] } } else { d.update(from: src, count: w) }
                                }
                            }
                            if format == .i420 {
                                for (plane, source) in [(1, bp), (2, rp)] {
                                    buffer.withUnsafeMutableBytes(ofPlane: plane) { bytes, p in
                                        for cy in 0..<oh {
                                            let d = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + cy * p.bytesPerRow
                                            let c = ys[cy] * cw
                                            for cx in 0..<ow { d[cx] = cm[Int(source[c + xs[cx]])] }
                                        }
                                    }
                                }
                            } else {
                                buffer.withUnsafeMutableBytes(ofPlane: 1) { bytes, p in
                                    for cy in 0..<oh {
                                        let d = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + cy * p.bytesPerRow
                                        let c = ys[cy] * cw
                                        for cx in 0..<ow {
                                            d[2 * cx] = cm[Int(bp[c + xs[cx]])]
                                            d[2 * cx + 1] = cm[Int(rp[c + xs[cx]])]
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

    static let identity: [UInt8] = (0..<256).map { UInt8($0) }

    /// Reads a NV12, I420 or YUYV buffer into full-range planes at its own subsampling; RGB24,
    /// BGRA and GRAY8 buffers become full-range BT.601 planes at 4:4:4.
    public init(reading buffer: PixelBuffer) throws(PixelBufferError) {
        self.init(width: 0, height: 0, chromaWidth: 0, chromaHeight: 0)
        try read(buffer)
    }

    /// Fits the planes to a geometry, keeping their storage when it is already that size (a
    /// per-frame caller such as the preview's encoder reuses one set instead of allocating three
    /// large arrays a frame, which fragments the heap over a long run).
    private mutating func fit(width: Int, height: Int, chromaWidth: Int, chromaHeight: Int) {
        guard (width, height, chromaWidth, chromaHeight) != (self.width, self.height, self.chromaWidth, self.chromaHeight)
        else { return }
        self = PlanarYCbCr(width: width, height: height, chromaWidth: chromaWidth, chromaHeight: chromaHeight)
    }

    /// Reads a buffer's planes (as ``init(reading:)``) into these, reusing their storage when the
    /// geometry matches.
    public mutating func read(_ buffer: PixelBuffer) throws(PixelBufferError) {
        let w = buffer.width
        let h = buffer.height
        let video = buffer.format != .nv12FullRange
        let lumaMap = video ? Self.lumaToFull : nil
        let chromaMap = video ? Self.chromaToFull : nil
        switch buffer.format {
        case .nv12VideoRange, .nv12FullRange, .i420:
            fit(width: w, height: h, chromaWidth: w / 2, chromaHeight: h / 2)
            // Row loops over plane pointers (this runs for every frame a recording encodes).
            let lm = lumaMap ?? Self.identity
            let cm = chromaMap ?? Self.identity
            let cw = w / 2
            let planar = buffer.format == .i420
            buffer.withUnsafeBytes(ofPlane: 0) { bytes, p in
                y.withUnsafeMutableBufferPointer { out in
                    for row in 0..<h {
                        let src = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + row * p.bytesPerRow
                        for col in 0..<w { out[row &* w &+ col] = lm[Int(src[col])] }
                    }
                }
            }
            // Chroma: interleaved CbCr (NV12) or separate Cb and Cr planes (I420).
            func chroma(_ a: UnsafeRawPointer, _ aStride: Int, _ v: UnsafeRawPointer?, _ vStride: Int) {
                cb.withUnsafeMutableBufferPointer { bOut in
                    cr.withUnsafeMutableBufferPointer { rOut in
                        for row in 0..<h / 2 {
                            let u = a.assumingMemoryBound(to: UInt8.self) + row * aStride
                            if let v {
                                let vr = v.assumingMemoryBound(to: UInt8.self) + row * vStride
                                for cx in 0..<cw {
                                    bOut[row &* cw &+ cx] = cm[Int(u[cx])]
                                    rOut[row &* cw &+ cx] = cm[Int(vr[cx])]
                                }
                            } else {
                                for cx in 0..<cw {
                                    bOut[row &* cw &+ cx] = cm[Int(u[2 &* cx])]
                                    rOut[row &* cw &+ cx] = cm[Int(u[2 &* cx &+ 1])]
                                }
                            }
                        }
                    }
                }
            }
            buffer.withUnsafeBytes(ofPlane: 1) { first, fp in
                if planar {
                    buffer.withUnsafeBytes(ofPlane: 2) { second, sp in
                        chroma(first.baseAddress!, fp.bytesPerRow, second.baseAddress!, sp.bytesPerRow)
                    }
                } else {
                    chroma(first.baseAddress!, fp.bytesPerRow, nil, 0)
                }
            }
        case .yuyv:
            fit(width: w, height: h, chromaWidth: w / 2, chromaHeight: h)
            buffer.withUnsafeBytes(ofPlane: 0) { bytes, p in
                for row in 0..<h {
                    for pair in 0..<w / 2 {
                        let o = row * p.bytesPerRow + 4 * pair
                        y[row * w + 2 * pair] = lumaMap?[Int(bytes[o])] ?? bytes[o]
                        y[row * w + 2 * pair + 1] = lumaMap?[Int(bytes[o + 2])] ?? bytes[o + 2]
                        cb[row * chromaWidth + pair] = chromaMap?[Int(bytes[o + 1])] ?? bytes[o + 1]
                        cr[row * chromaWidth + pair] = chromaMap?[Int(bytes[o + 3])] ?? bytes[o + 3]
                    }
                }
            }
        case .rgb24, .bgra32, .gray8:
            fit(width: w, height: h, chromaWidth: w, chromaHeight: h)
            if buffer.format == .gray8 { // no chroma: neutral, whatever a reused plane held
                cb.withUnsafeMutableBufferPointer { $0.update(repeating: 128) }
                cr.withUnsafeMutableBufferPointer { $0.update(repeating: 128) }
            }
            let stride = buffer.format == .rgb24 ? 3 : buffer.format == .bgra32 ? 4 : 1
            let (ri, bi) = buffer.format == .bgra32 ? (2, 0) : (0, 2)
            buffer.withUnsafeBytes(ofPlane: 0) { bytes, p in
                for row in 0..<h {
                    for col in 0..<w {
                        let o = row * p.bytesPerRow + col * stride
                        if stride == 1 {
                            y[row * w + col] = bytes[o]
                            continue
                        }
                        let r = Int32(bytes[o + ri])
                        let g = Int32(bytes[o + 1])
                        let b = Int32(bytes[o + bi])
                        // JFIF (full-range BT.601) in 16-bit fixed point.
                        y[row * w + col] = UInt8(clamping: (19595 &* r &+ 38470 &* g &+ 7471 &* b &+ 32768) >> 16)
                        cb[row * w + col] = UInt8(clamping: ((-11059 &* r &- 21709 &* g &+ 32768 &* b &+ 32768) >> 16) &+ 128)
                        cr[row * w + col] = UInt8(clamping: ((32768 &* r &- 27439 &* g &- 5329 &* b &+ 32768) >> 16) &+ 128)
                    }
                }
            }
        }
    }
}
