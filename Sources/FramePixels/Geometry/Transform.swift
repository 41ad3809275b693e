import FrameCore

/// Rotation by quarter turns and mirroring: what a capture connection applies.
public enum Transform {
    public enum Rotation: Int, Sendable, CaseIterable {
        case none = 0
        case clockwise90 = 90
        case rotate180 = 180
        case clockwise270 = 270
    }

    /// Whether `format` can be rotated by `rotation` (YUYV shares chroma between horizontal
    /// pixel pairs, so it only turns by 0 or 180 degrees).
    public static func supports(_ format: PixelFormat, rotation: Rotation) -> Bool {
        format != .yuyv || rotation == .none || rotation == .rotate180
    }

    /// Throws unless `format` can be rotated by `rotation` (checked before anything is allocated).
    static func requireSupport(_ format: PixelFormat, rotation: Rotation) throws(PixelBufferError) {
        guard supports(format, rotation: rotation) else {
            throw .unsupportedFormat(format, operation: "rotation by \(rotation.rawValue) degrees")
        }
    }

    /// Where positions of a `width` x `height` image go when it is turned clockwise by
    /// `rotation` and then mirrored left-right if `mirrored` (what ``apply(_:rotation:mirrored:)``
    /// does to its pixels), in continuous pixel coordinates.
    public static func pointMap(width: Int, height: Int, rotation: Rotation, mirrored: Bool) -> PointMap {
        let w = Double(width)
        let h = Double(height)
        var map: PointMap
        switch rotation {
        case .none: map = .identity
        case .clockwise90: map = PointMap(a: 0, b: -1, c: 1, d: 0, tx: h, ty: 0) // (x, y) → (h − y, x)
        case .rotate180: map = PointMap(a: -1, b: 0, c: 0, d: -1, tx: w, ty: h) // → (w − x, h − y)
        case .clockwise270: map = PointMap(a: 0, b: 1, c: -1, d: 0, tx: 0, ty: w) // → (y, w − x)
        }
        if mirrored {
            let outWidth = Double(size(width: width, height: height, rotation: rotation).width)
            map = map.then(PointMap(a: -1, b: 0, c: 0, d: 1, tx: outWidth, ty: 0))
        }
        return map
    }

    /// The size of `width` x `height` after `rotation`.
    public static func size(width: Int, height: Int, rotation: Rotation) -> (width: Int, height: Int) {
        rotation == .clockwise90 || rotation == .clockwise270 ? (height, width) : (width, height)
    }

    /// A quarter turn of an 8-bit plane in tiles of 32 rows by 256 columns, so reads and writes
    /// both stay in cache (the tile's 8 KB of source, and 32 bytes of each of 256 output rows);
    /// each tile goes as blocks transposed in registers (16x16 with AVX2, 8x8 with SSE2). The
    /// tiles were 32x32: then each tile's set-up and its calls cost more than its pixels
    /// (720p: 0.15 ns per pixel, 1.4x libyuv's time; now 0.06–0.09).
    static func quarterTurnGray(_ source: PixelBuffer, into out: inout PixelBuffer, clockwise: Bool) {
        let sw = source.width
        let sh = source.height
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            out.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let (tileRows, tileColumns) = (32, 256)
                for ty in stride(from: 0, to: sh, by: tileRows) {
                    for tx in stride(from: 0, to: sw, by: tileColumns) {
                        let yEnd = min(ty + tileRows, sh)
                        let xEnd = min(tx + tileColumns, sw)
                        // Whole blocks in registers (`QuarterTurn`, in the build that runs), then the rest.
                        let blockEnd = KernelDispatch.quarterTurnBlocks(
                            s, sp.bytesPerRow, d, dp.bytesPerRow, x: tx, y: ty, xEnd: xEnd, yEnd: yEnd, width: sw, height: sh,
                            clockwise: clockwise)
                        for sy in ty..<yEnd {
                            let row = s + sy * sp.bytesPerRow
                            // Pixels the blocks did not cover: the columns right of them, and whole rows below.
                            for sx in (sy < blockEnd.0 ? blockEnd.1 : tx)..<xEnd {
                                // Clockwise: (sx, sy) → (sh-1-sy, sx); counter-clockwise: (sy, sw-1-sx).
                                let (dx, dy) = clockwise ? (sh &- 1 &- sy, sx) : (sy, sw &- 1 &- sx)
                                d[dy &* dp.bytesPerRow &+ dx] = row[sx]
                            }
                        }
                    }
                }
            }
        }
    }

    /// Calls `body` with each row of each plane of `source` and the same row of `out`.
    static func eachRow(
        _ source: PixelBuffer, _ out: inout PixelBuffer,
        _ body: (UnsafeRawPointer, UnsafeMutableRawPointer, PixelBuffer.Plane) -> Void
    ) {
        for index in 0..<source.planeCount {
            let p = source.plane(index)
            source.withUnsafeBytes(ofPlane: index) { src, sp in
                out.withUnsafeMutableBytes(ofPlane: index) { dst, dp in
                    for y in 0..<p.height { body(src.baseAddress! + y * sp.bytesPerRow, dst.baseAddress! + y * dp.bytesPerRow, p) }
                }
            }
        }
    }

    static func copyRows(_ source: PixelBuffer, into out: inout PixelBuffer) {
        eachRow(source, &out) { s, d, p in d.copyMemory(from: s, byteCount: p.width * p.bytesPerPixel) }
    }

    /// Left-right mirror, plane by plane (`MirrorRows`, in the build that runs).
    static func mirrorRows(_ source: PixelBuffer, into out: inout PixelBuffer) {
        eachRow(source, &out) { s, d, p in KernelDispatch.mirrorRow(s, d, count: p.width, bytesPerPixel: p.bytesPerPixel) }
    }

    /// Rotates `source` clockwise by `rotation`, then mirrors left-right if `mirrored`, into a
    /// new buffer (`source` itself when there is nothing to do).
    public static func apply(_ source: PixelBuffer, rotation: Rotation, mirrored: Bool) throws(PixelBufferError) -> PixelBuffer {
        try requireSupport(source.format, rotation: rotation)
        if rotation == .none && !mirrored { return source }
        let size = size(width: source.width, height: source.height, rotation: rotation)
        var out = try PixelBuffer(width: size.width, height: size.height, format: source.format)
        try apply(source, rotation: rotation, mirrored: mirrored, into: &out)
        return out
    }

    /// Rotates and mirrors `source` into `destination`, which must have the source's format and
    /// its size after `rotation` (no allocation: what a chain stage reuses frame after frame).
    public static func apply(
        _ source: PixelBuffer, rotation: Rotation, mirrored: Bool,
        into out: inout PixelBuffer
    ) throws(PixelBufferError) {
        try requireSupport(source.format, rotation: rotation)
        let size = size(width: source.width, height: source.height, rotation: rotation)
        guard out.format == source.format else { throw .unsupportedFormat(out.format, operation: "destination (needs \(source.format))") }
        guard out.width == size.width, out.height == size.height else {
            throw .sizeMismatch(expected: "\(size.width)x\(size.height)", actual: "\(out.width)x\(out.height)")
        }
        if rotation == .none && !mirrored { return copyRows(source, into: &out) }
        if rotation == .none && source.format != .yuyv { return mirrorRows(source, into: &out) }
        if source.format == .gray8 && !mirrored && (rotation == .clockwise90 || rotation == .clockwise270) {
            return quarterTurnGray(source, into: &out, clockwise: rotation == .clockwise90)
        }
        for index in 0..<source.planeCount {
            let sp = source.plane(index)
            let bpp = source.format == .yuyv ? 4 : sp.bytesPerPixel
            let sw = source.format == .yuyv ? sp.width / 2 : sp.width
            source.withUnsafeBytes(ofPlane: index) { src, _ in
                out.withUnsafeMutableBytes(ofPlane: index) { dst, dp in
                    let dw = rotation == .clockwise90 || rotation == .clockwise270 ? sp.height : sw
                    for sy in 0..<sp.height {
                        for sx in 0..<sw {
                            var (dx, dy): (Int, Int)
                            switch rotation {
                            case .none: (dx, dy) = (sx, sy)
                            case .clockwise90: (dx, dy) = (sp.height - 1 - sy, sx)
                            case .rotate180: (dx, dy) = (sw - 1 - sx, sp.height - 1 - sy)
                            case .clockwise270: (dx, dy) = (sy, sw - 1 - sx)
                            }
                            if mirrored { dx = dw - 1 - dx }
                            let s = sy * sp.bytesPerRow + sx * bpp
                            let d = dy * dp.bytesPerRow + dx * bpp
                            for k in 0..<bpp { dst[d + k] = src[s + k] }
                            // A reversed YUYV pair must swap its two luma samples.
                            if source.format == .yuyv && (mirrored != (rotation == .rotate180)) {
                                dst[d] = src[s + 2]
                                dst[d + 2] = src[s]
                            }
                        }
                    }
                }
            }
        }
    }
}
