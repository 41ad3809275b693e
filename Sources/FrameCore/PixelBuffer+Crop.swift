extension PixelBuffer {
    /// The part of the image inside `rect`, sharing this buffer's storage (no copy). Y'CbCr
    /// formats need even coordinates and sizes (chroma is shared by pixel pairs).
    public func cropped(to rect: Rect) throws(PixelBufferError) -> PixelBuffer {
        let a = format.sizeAlignment
        guard rect.x >= 0, rect.y >= 0, rect.width > 0, rect.height > 0, rect.maxX <= width, rect.maxY <= height,
            rect.x % a.width == 0, rect.y % a.height == 0
        else {
            throw .regionOutsideImage(rect, width: width, height: height, format: format)
        }
        var descriptors: [(offset: Int, bytesPerRow: Int)] = []
        for index in 0..<planeCount {
            let p = plane(index)
            let sx = p.width == width ? 1 : 2
            let sy = p.height == height ? 1 : 2
            let x = format == .yuyv ? rect.x : rect.x / sx
            descriptors.append((p.offset + (rect.y / sy) * p.bytesPerRow + x * (format == .yuyv ? 2 : p.bytesPerPixel), p.bytesPerRow))
        }
        return try PixelBuffer(width: rect.width, height: rect.height, format: format, storage: storage, planes: descriptors)
    }

    /// The luma plane of a NV12 or I420 buffer (or a GRAY8 buffer itself) as a GRAY8 buffer
    /// sharing this one's storage: gray for free.
    public func lumaPlane() throws(PixelBufferError) -> PixelBuffer {
        switch format {
        case .gray8: return self
        case .nv12VideoRange, .nv12FullRange, .i420:
            let p = plane(0)
            return try PixelBuffer(
                width: width, height: height, format: .gray8, storage: storage,
                planes: [(p.offset, p.bytesPerRow)])
        default: throw .unsupportedFormat(format, operation: "a luma-plane view (NV12, I420, GRAY8)")
        }
    }

    /// The storage behind this buffer, for making buffers of other shapes over the same memory
    /// (a scratch area reused at several sizes). Writing through such views is the caller's
    /// responsibility: they bypass copy-on-write. `package`: an escape hatch for FrameKit's own
    /// scratch buffers, not an API.
    package var unsafeStorageForViews: PixelStorage { storage }
}
