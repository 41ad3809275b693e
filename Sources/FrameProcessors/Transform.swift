import FrameCore

/// Rotation by quarter turns and mirroring: what a capture connection applies.
public enum Transform {
    public enum Rotation: Int, Sendable, CaseIterable {
        case none = 0, clockwise90 = 90, rotate180 = 180, clockwise270 = 270
    }

    /// Whether `format` can be rotated by `rotation` (YUYV shares chroma between horizontal
    /// pixel pairs, so it only turns by 0 or 180 degrees).
    public static func supports(_ format: PixelFormat, rotation: Rotation) -> Bool {
        format != .yuyv || rotation == .none || rotation == .rotate180
    }

    /// The size of `width` x `height` after `rotation`.
    public static func size(width: Int, height: Int, rotation: Rotation) -> (width: Int, height: Int) {
        rotation == .clockwise90 || rotation == .clockwise270 ? (height, width) : (width, height)
    }

    /// A quarter turn of an 8-bit plane in 32x32 tiles, so reads and writes both stay in cache.
    static func quarterTurnGray(_ source: PixelBuffer, into out: inout PixelBuffer, clockwise: Bool) {
        let sw = source.width, sh = source.height
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            out.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let tile = 32
                for ty in stride(from: 0, to: sh, by: tile) {
                    for tx in stride(from: 0, to: sw, by: tile) {
                        for sy in ty..<min(ty + tile, sh) {
                            let row = s + sy * sp.bytesPerRow
                            for sx in tx..<min(tx + tile, sw) {
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

    /// Left-right mirror, plane by plane, with loops specialised per element size.
    static func mirrorRows(_ source: PixelBuffer, into out: inout PixelBuffer) {
        for index in 0..<source.planeCount {
            let p = source.plane(index)
            source.withUnsafeBytes(ofPlane: index) { src, _ in
                out.withUnsafeMutableBytes(ofPlane: index) { dst, dp in
                    for y in 0..<p.height {
                        let s = src.baseAddress! + y * p.bytesPerRow, d = dst.baseAddress! + y * dp.bytesPerRow
                        let n = p.width
                        switch p.bytesPerPixel {
                        case 1:
                            let a = s.assumingMemoryBound(to: UInt8.self), b = d.assumingMemoryBound(to: UInt8.self)
                            for x in 0..<n { b[n &- 1 &- x] = a[x] }
                        case 2:
                            for x in 0..<n { d.storeBytes(of: s.loadUnaligned(fromByteOffset: 2 &* x, as: UInt16.self), toByteOffset: 2 &* (n &- 1 &- x), as: UInt16.self) }
                        case 4:
                            for x in 0..<n { d.storeBytes(of: s.loadUnaligned(fromByteOffset: 4 &* x, as: UInt32.self), toByteOffset: 4 &* (n &- 1 &- x), as: UInt32.self) }
                        default:
                            for x in 0..<n {
                                let from = s + p.bytesPerPixel &* x, to = d + p.bytesPerPixel &* (n &- 1 &- x)
                                to.copyMemory(from: from, byteCount: p.bytesPerPixel)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Rotates `source` clockwise by `rotation`, then mirrors left-right if `mirrored`.
    public static func apply(_ source: PixelBuffer, rotation: Rotation, mirrored: Bool) throws(PixelBufferError) -> PixelBuffer {
        guard supports(source.format, rotation: rotation) else {
            throw .unsupportedFormat(source.format, operation: "rotation by \(rotation.rawValue) degrees")
        }
        if rotation == .none && !mirrored { return source }
        let size = size(width: source.width, height: source.height, rotation: rotation)
        var out = try PixelBuffer(width: size.width, height: size.height, format: source.format)
        if rotation == .none && source.format != .yuyv {
            mirrorRows(source, into: &out)
            return out
        }
        if source.format == .gray8 && !mirrored && (rotation == .clockwise90 || rotation == .clockwise270) {
            quarterTurnGray(source, into: &out, clockwise: rotation == .clockwise90)
            return out
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
                            let s = sy * sp.bytesPerRow + sx * bpp, d = dy * dp.bytesPerRow + dx * bpp
                            for k in 0..<bpp { dst[d + k] = src[s + k] }
                            // A reversed YUYV pair must swap its two luma samples.
                            if source.format == .yuyv && (mirrored != (rotation == .rotate180)) {
                                dst[d] = src[s + 2]; dst[d + 2] = src[s]
                            }
                        }
                    }
                }
            }
        }
        return out
    }
}
