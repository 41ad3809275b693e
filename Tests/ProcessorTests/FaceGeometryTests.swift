import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// Faces always in the coordinates of the buffer they travel with (#14): geometric stages map
/// them, and a derived image can be searched while the frame goes on unchanged.
@Suite("Faces follow geometric stages")
struct FaceGeometryTests {
    func frame(_ image: PixelBuffer, faces: [Face] = []) -> SampleBuffer {
        SampleBuffer(pixelBuffer: image, presentationTime: 0, sequenceNumber: 0, captureInstant: .now(), faces: faces)
    }

    /// A black GRAY8 image with a white `box`.
    func marked(_ box: Rect, width: Int, height: Int) throws -> PixelBuffer {
        var image = try PixelBuffer(width: width, height: height, format: .gray8)
        image.withUnsafeMutableBytes(ofPlane: 0) { b, p in
            for y in box.y..<box.maxY { for x in box.x..<box.maxX { b[y * p.bytesPerRow + x] = 255 } }
        }
        return image
    }

    /// The box around the white pixels.
    func whiteBox(_ image: PixelBuffer) -> Rect {
        var (x0, y0, x1, y1) = (Int.max, Int.max, -1, -1)
        image.withUnsafeBytes(ofPlane: 0) { b, p in
            for y in 0..<p.height {
                for x in 0..<p.width where b[y * p.bytesPerRow + x] == 255 {
                    x0 = min(x0, x)
                    y0 = min(y0, y)
                    x1 = max(x1, x)
                    y1 = max(y1, y)
                }
            }
        }
        return Rect(x: x0, y: y0, width: x1 - x0 + 1, height: y1 - y0 + 1)
    }

    @Test("rotation and mirroring carry a face exactly onto the same pixels", arguments: Transform.Rotation.allCases, [false, true])
    func transform(rotation: Transform.Rotation, mirrored: Bool) throws {
        let box = Rect(x: 10, y: 5, width: 20, height: 12)
        var f = frame(
            try marked(box, width: 64, height: 40),
            faces: [Face(bounds: box, confidence: 0.9, landmarks: [Point(x: 10, y: 5)])])
        try TransformStage(rotation: rotation, mirrored: mirrored).process(&f)
        #expect(f.faces.count == 1)
        #expect(f.faces[0].bounds == whiteBox(f.pixelBuffer), "\(rotation) mirrored \(mirrored)")
        #expect(f.faces[0].confidence == 0.9 && f.faces[0].landmarks.count == 1)
    }

    @Test("a resize scales faces into the smaller buffer; a crop moves and cuts them")
    func resizeAndCrop() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let detector = try FaceDetector()
        var f = frame(photo, faces: try detector.detect(in: photo))
        try ResizeStage(width: 256, height: 256, method: .bilinear).process(&f)
        let direct = try detector.detect(in: f.pixelBuffer)
        #expect(f.faces.count == 1 && direct.count == 1)
        #expect(f.faces[0].bounds.iou(direct[0].bounds) > 0.8, "\(f.faces[0].bounds) vs \(direct[0].bounds)")
        let before = f.faces[0].bounds
        try CropStage(Rect(x: 50, y: 20, width: 150, height: 150)).process(&f)
        #expect(f.faces[0].bounds.x == before.x - 50 && f.faces[0].bounds.y == before.y - 20)
        try CropStage(Rect(x: 140, y: 140, width: 8, height: 8)).process(&f)
        #expect(f.faces.isEmpty, "a face wholly outside the crop is dropped")
    }

    @Test("detect on a shrunk gray copy; the delegate gets the full colour frame, faces in its coordinates")
    func derived() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let full = try FaceDetector().detect(in: photo)
        let stage = DerivedImageDetection(
            derive: [ConvertStage(to: .gray8), try ResizeStage(width: 256, height: 256)],
            detect: FaceDetectionProcessor(detector: try FaceDetector()))
        var f = frame(photo)
        try stage.process(&f)
        #expect(f.pixelBuffer.width == 512 && f.pixelBuffer.format == .rgb24, "the frame itself is unchanged")
        #expect(f.faces.count == 1 && full.count == 1)
        #expect(f.faces[0].bounds.iou(full[0].bounds) > 0.75, "\(f.faces[0].bounds) vs \(full[0].bounds)")
    }
}
