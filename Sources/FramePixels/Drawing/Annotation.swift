import FrameCore

/// Drawing on buffers: face boxes for the preview and `framekit detect --annotate`, and faces
/// with their landmarks for a program's own pictures.
public enum Annotation {
    /// The colours drawn.
    public enum Colour: Sendable {
        /// RGB 0,255,0 (for Y'CbCr its BT.601 video-range value; white on gray): face boxes.
        case green
        case white
        case black
    }

    /// Draws the outline of each rectangle, `thickness` pixels wide, clipped to the image, in
    /// green (RGB 0,255,0; for Y'CbCr its BT.601 video-range value; white on gray).
    public static func drawBoxes(_ boxes: [Rect], on buffer: inout PixelBuffer, thickness: Int = 3) {
        fill(
            boxes.flatMap { box in
                let t = max(1, min(thickness, box.width / 2, box.height / 2))
                return [
                    Rect(x: box.x, y: box.y, width: box.width, height: t), Rect(x: box.x, y: box.maxY - t, width: box.width, height: t),
                    Rect(x: box.x, y: box.y, width: t, height: box.height), Rect(x: box.maxX - t, y: box.y, width: t, height: box.height)
                ]
            }, with: .green, on: &buffer)
    }

    /// Draws each face's box (as ``drawBoxes(_:on:thickness:)``) and, with `landmarks`, its
    /// five landmarks — eyes, nose tip, mouth corners — as white squares ringed in black (seen
    /// on light and dark skin alike), sized to the face (a 100 px face gets 5 px marks).
    public static func drawFaces(_ faces: [Face], on buffer: inout PixelBuffer, thickness: Int = 3, landmarks: Bool = true) {
        drawBoxes(faces.map(\.bounds), on: &buffer, thickness: thickness)
        guard landmarks else { return }
        var rings: [Rect] = []
        var marks: [Rect] = []
        for face in faces {
            let half = max(1, min(face.bounds.width, face.bounds.height) / 40)
            // Points far outside any image (or NaN) are skipped, never converted (a trap).
            for point in face.landmarks where abs(point.x) < 1e9 && abs(point.y) < 1e9 {
                let x = Int(point.x.rounded())
                let y = Int(point.y.rounded())
                rings.append(Rect(x: x - half - 1, y: y - half - 1, width: 2 * half + 3, height: 2 * half + 3))
                marks.append(Rect(x: x - half, y: y - half, width: 2 * half + 1, height: 2 * half + 1))
            }
        }
        fill(rings, with: .black, on: &buffer)
        fill(marks, with: .white, on: &buffer)
    }

    /// Fills each rectangle, clipped to the image, with `colour` (chroma-subsampled formats at
    /// their chroma resolution: a rectangle on even coordinates keeps its colour to the edge).
    public static func fill(_ rects: [Rect], with colour: Colour, on buffer: inout PixelBuffer) {
        guard !rects.isEmpty else { return }
        let w = buffer.width
        let h = buffer.height
        // Per plane: the value to write for one pixel's sample(s), and the plane's subsampling.
        for plane in 0..<buffer.planeCount {
            let p = buffer.plane(plane)
            let sx = w / p.width
            let sy = h / p.height
            let bytes = samples(of: colour, format: buffer.format, plane: plane)
            let unit = buffer.format == .yuyv ? 2 : 1 // pixels per written element
            buffer.withUnsafeMutableBytes(ofPlane: plane) { dst, _ in
                for rect in rects {
                    let r = rect.clamped(width: w, height: h)
                    guard r.width > 0, r.height > 0 else { continue }
                    let x0 = r.x / (sx * unit)
                    let x1 = (r.maxX - 1) / (sx * unit)
                    for y in stride(from: r.y / sy, through: (r.maxY - 1) / sy, by: 1) {
                        for x in x0...x1 {
                            let o = y * p.bytesPerRow + x * bytes.count
                            for (k, b) in bytes.enumerated() { dst[o + k] = b }
                        }
                    }
                }
            }
        }
    }

    /// The bytes of one element of `plane` (a pixel; a pixel pair for YUYV) in `colour`.
    static func samples(of colour: Colour, format: PixelFormat, plane: Int) -> [UInt8] {
        let fullRange = format == .nv12FullRange
        switch (colour, format, plane) {
        case (.green, .gray8, _): return [255]
        case (.green, .rgb24, _): return [0, 255, 0]
        case (.green, .bgra32, _): return [0, 255, 0, 255]
        case (.green, .nv12VideoRange, 0), (.green, .nv12FullRange, 0), (.green, .i420, 0): return [145]
        case (.green, .nv12VideoRange, _), (.green, .nv12FullRange, _): return [54, 34]
        case (.green, .i420, 1): return [54]
        case (.green, .i420, _): return [34]
        case (.green, .yuyv, _): return [145, 54, 145, 34]
        case (_, .gray8, _): return [colour == .white ? 255 : 0]
        case (_, .rgb24, _): return Array(repeating: colour == .white ? 255 : 0, count: 3)
        case (_, .bgra32, _): return Array(repeating: colour == .white ? 255 : 0, count: 3) + [255]
        case (_, .yuyv, _):
            let y: UInt8 = colour == .white ? 235 : 16
            return [y, 128, y, 128]
        case (_, _, 0): return [colour == .white ? (fullRange ? 255 : 235) : (fullRange ? 0 : 16)]
        case (_, .nv12VideoRange, _), (_, .nv12FullRange, _): return [128, 128]
        case (_, _, _): return [128]
        }
    }
}
