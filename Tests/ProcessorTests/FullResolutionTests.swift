import Foundation
import FrameKit
import FrameTestSupport
import Testing

@testable import FrameProcessors

/// `FaceDetector.detectAtFullResolution(in:)`: a still picture searched at its own scale in
/// tiles, its large faces by the whole-image pass.
@Suite("Face detection at full resolution")
struct FullResolutionTests {
    /// The astronaut photo (its face ~88 px of 512) scaled by `scale` and pasted at `origin`
    /// into a gray canvas; returns the canvas and where the face is.
    static func canvas(width: Int, height: Int, photoScale scale: Double, at origin: (x: Int, y: Int)) throws -> (PixelBuffer, Rect) {
        let photo = try PixelFormatConversion.convert(try PixelBuffer(contentsOf: Fixtures.astronaut), to: .rgb24)
        var scaled = try PixelBuffer(
            width: Int(Double(photo.width) * scale), height: Int(Double(photo.height) * scale), format: .rgb24)
        try Resize.bilinear(photo, into: &scaled)
        var canvas = try PixelBuffer(width: width, height: height, format: .rgb24)
        canvas.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
            for y in 0..<height { for x in 0..<(width * 3) { d[y * dp.bytesPerRow + x] = 120 } }
            scaled.withUnsafeBytes(ofPlane: 0) { s, sp in
                for y in 0..<min(scaled.height, height - origin.y) {
                    for x in 0..<min(scaled.width * 3, (width - origin.x) * 3) {
                        d[(origin.y + y) * dp.bytesPerRow + origin.x * 3 + x] = s[y * sp.bytesPerRow + x]
                    }
                }
            }
        }
        // The face as detect(in:) finds it in the photo alone (x 181, y 58, 88x120 of 512).
        let face = Rect(
            x: origin.x + Int(181 * scale), y: origin.y + Int(58 * scale), width: Int(88 * scale), height: Int(120 * scale))
        return (canvas, face)
    }

    @Test("a 20-odd px face in a 2400x1800 picture, across a tile edge: missed shrunk to the input, found once at full resolution")
    func smallFaceInLargePicture() throws {
        let detector = try FaceDetector()
        // Where the first tile column ends and the second begins: the face is placed across the
        // second's left edge, so the first holds it whole and the second cuts it.
        let level = try #require(FaceDetector.levels(width: 2400, height: 1800, inputSize: 640).first)
        let edge = FaceDetector.tileStarts(length: 2400, tile: level.tile, step: level.tile - level.overlap)[1]
        for x in stride(from: edge - 62, through: edge - 50, by: 4) {
            let (image, face) = try Self.canvas(width: 2400, height: 1800, photoScale: 0.25, at: (x: x, y: 700))
            #expect(face.width >= 20 && face.width <= 24)
            #expect(face.x < edge && face.maxX > edge && face.maxX < level.tile, "\(face) edge \(edge)")
            let shrunk = try detector.detect(in: image)
            #expect(!shrunk.contains { $0.bounds.iou(face) > 0.4 })
            let found = try detector.detectAtFullResolution(in: image)
            #expect(
                found.count == 1 && found.allSatisfy { $0.bounds.iou(face) > 0.4 },
                "\(found.map(\.bounds)) face \(face) shrunk \(shrunk.map(\.bounds))")
        }
    }

    @Test("a face larger than the tiles' overlap is found once")
    func largeFace() throws {
        let detector = try FaceDetector()
        let (image, face) = try Self.canvas(width: 1800, height: 1800, photoScale: 3.4, at: (x: 0, y: 0))
        let level = try #require(FaceDetector.levels(width: 1800, height: 1800, inputSize: 640).first)
        #expect(face.width > level.overlap) // tiles may cut it
        let found = try detector.detectAtFullResolution(in: image)
        #expect(found.count == 1 && found.allSatisfy { $0.bounds.iou(face) > 0.4 }, "\(found.map(\.bounds)) face \(face)")
    }

    @Test(
        "levels: one at the image's scale while the whole pass sees what its tiles miss; halves beyond; none for an input too small to tile"
    )
    func levels() {
        #expect(FaceDetector.levels(width: 600, height: 400, inputSize: 640).isEmpty)
        let photo = FaceDetector.levels(width: 1600, height: 1200, inputSize: 640)
        #expect(photo.count == 1 && photo[0].scale == 1 && photo[0].tile == 640 && photo[0].overlap == 50)
        let huge = FaceDetector.levels(width: 8000, height: 6000, inputSize: 640)
        #expect(huge.map(\.scale) == [1, 0.5] && huge.allSatisfy { 4 * $0.overlap <= $0.tile })
        #expect(FaceDetector.levels(width: 4000, height: 3000, inputSize: 64).isEmpty)
        #expect(FaceDetector.levels(width: 4000, height: 3000, inputSize: 150).isEmpty)
    }

    @Test("tiles cover the length, a step apart, the last flush with the end")
    func tileStarts() {
        #expect(FaceDetector.tileStarts(length: 500, tile: 640, step: 480) == [0])
        #expect(FaceDetector.tileStarts(length: 1600, tile: 640, step: 480) == [0, 480, 960])
        #expect(FaceDetector.tileStarts(length: 1120, tile: 640, step: 480) == [0, 480])
        #expect(FaceDetector.tileStarts(length: 1121, tile: 640, step: 480) == [0, 480, 481])
    }
}
