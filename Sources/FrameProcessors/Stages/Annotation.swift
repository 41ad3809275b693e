import FrameCore

/// Drawing on buffers: face boxes for the preview and `framekit detect --annotate`.
public enum Annotation {
    /// Draws the outline of each rectangle, `thickness` pixels wide, clipped to the image, in
    /// green (RGB 0,255,0; for Y'CbCr its BT.601 video-range value; white on gray).
    public static func drawBoxes(_ boxes: [Rect], on buffer: inout PixelBuffer, thickness: Int = 3) {
        guard !boxes.isEmpty else { return }
        let w = buffer.width
        let h = buffer.height
        // Per plane: the value to write for one pixel's sample(s), and the plane's subsampling.
        for plane in 0..<buffer.planeCount {
            let p = buffer.plane(plane)
            let sx = w / p.width
            let sy = h / p.height
            let bytes: [UInt8]
            switch (buffer.format, plane) {
            case (.gray8, _): bytes = [255]
            case (.rgb24, _): bytes = [0, 255, 0]
            case (.bgra32, _): bytes = [0, 255, 0, 255]
            case (.nv12VideoRange, 0), (.nv12FullRange, 0), (.i420, 0): bytes = [145]
            case (.nv12VideoRange, _), (.nv12FullRange, _): bytes = [54, 34]
            case (.i420, 1): bytes = [54]
            case (.i420, _): bytes = [34]
            case (.yuyv, _): bytes = [145, 54, 145, 34] // a pixel pair
            }
            let unit = buffer.format == .yuyv ? 2 : 1 // pixels per written element
            buffer.withUnsafeMutableBytes(ofPlane: plane) { dst, _ in
                func fill(_ rect: Rect) {
                    let r = rect.clamped(width: w, height: h)
                    guard r.width > 0, r.height > 0 else { return }
                    let x0 = r.x / (sx * unit)
                    let x1 = (r.maxX - 1) / (sx * unit)
                    for y in stride(from: r.y / sy, through: (r.maxY - 1) / sy, by: 1) {
                        for x in x0...x1 {
                            let o = y * p.bytesPerRow + x * bytes.count
                            for (k, b) in bytes.enumerated() { dst[o + k] = b }
                        }
                    }
                }
                for box in boxes {
                    let t = max(1, min(thickness, box.width / 2, box.height / 2))
                    fill(Rect(x: box.x, y: box.y, width: box.width, height: t))
                    fill(Rect(x: box.x, y: box.maxY - t, width: box.width, height: t))
                    fill(Rect(x: box.x, y: box.y, width: t, height: box.height))
                    fill(Rect(x: box.maxX - t, y: box.y, width: t, height: box.height))
                }
            }
        }
    }
}

/// Draws the frame's faces on it (after a ``FaceDetectionProcessor``).
public struct AnnotationStage: Processor {
    public let thickness: Int
    public var name: String { "annotate" }
    public init(thickness: Int = 3) { self.thickness = thickness }
    public func process(_ frame: inout SampleBuffer) throws {
        Annotation.drawBoxes(frame.faces.map(\.bounds), on: &frame.pixelBuffer, thickness: thickness)
    }
}
