import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("SSE2 blocks at every row length around their step")
struct VectorEdgeTests {
    /// Widths just under, at and over the kernels' 8/16-pixel steps, as views into a real photo
    /// (rows padded, so each row ends on its own), against OpenCV.
    static let widths = [2, 6, 14, 16, 18, 30, 32, 34, 46, 48, 50, 66]

    @Test("blurs and Sobel on images 1–5 pixels wide or high, against OpenCV (and never a trap)")
    func tinyImages() throws {
        let gray = try ReferenceImages.load(Fixtures.coffee, as: .gray8)
        for (width, height) in [(1, 1), (1, 7), (2, 5), (3, 3), (4, 9), (5, 1), (7, 2)] {
            let image = try gray.cropped(to: Rect(x: 100, y: 100, width: width, height: height))
            for size in [3, 5] { try FilterAccuracyTests.expectBlursMatchOpenCV(image, size: size, "\(width)x\(height)") }
            var ours = try PixelBuffer(width: width, height: height, format: .gray8)
            var theirs = ours.copy()
            try Filters.sobelMagnitude(image, into: &ours)
            try OpenCV.sobelMagnitude(image, &theirs)
            #expect(ReferenceImages.difference(ours, theirs).max == 0, "sobel on \(width)x\(height)")
        }
    }

    @Test("conversions, bilinear resize and quarter turns against OpenCV at widths 2…66")
    func narrowRows() throws {
        for width in Self.widths {
            let rect = Rect(x: 4, y: 6, width: width, height: 10)
            for (format, code) in FilterAccuracyTests.grayCases {
                let image = try ReferenceImages.load(Fixtures.coffee, as: format).cropped(to: rect)
                var ours = try PixelBuffer(width: width, height: 10, format: .gray8)
                var theirs = ours.copy()
                try ColorConversion.convertToGray(image, into: &ours)
                try OpenCV.cvtColor(image, &theirs, code)
                #expect(ReferenceImages.difference(ours, theirs).max == 0, "\(format)→gray, width \(width)")
            }
            for (source, target, code) in FilterAccuracyTests.rgbCases {
                // Packed: the OpenCV shim reads 4:2:0 as one matrix, chroma right after luma.
                let image = try ReferenceImages.load(Fixtures.coffee, as: source).cropped(to: rect).copy()
                var ours = try PixelBuffer(width: width, height: 10, format: target)
                var theirs = ours.copy()
                try ColorConversion.convert(image, into: &ours, matrix: .bt601)
                try OpenCV.cvtColor(image, &theirs, code)
                #expect(ReferenceImages.difference(ours, theirs).max <= 1, "\(source)→\(target), width \(width)")
            }
            let gray = try ReferenceImages.load(Fixtures.coffee, as: .gray8)
            var ours = try PixelBuffer(width: width, height: 9, format: .gray8)
            var theirs = ours.copy()
            try Resize.bilinear(gray.cropped(to: Rect(x: 0, y: 0, width: width * 3 / 2 + 1, height: 14)), into: &ours)
            try OpenCV.resize(gray.cropped(to: Rect(x: 0, y: 0, width: width * 3 / 2 + 1, height: 14)), &theirs, area: false)
            #expect(ReferenceImages.difference(ours, theirs).max <= 1, "bilinear to width \(width)")
            let block = try gray.cropped(to: Rect(x: 1, y: 3, width: width, height: width / 2 + 9))
            for rotation in [Transform.Rotation.clockwise90, .clockwise270] {
                let turned = try Transform.apply(block, rotation: rotation, mirrored: false)
                var reference = try PixelBuffer(width: turned.width, height: turned.height, format: .gray8)
                try OpenCV.rotate(block, &reference, degrees: rotation.rawValue)
                #expect(turned.packedBytes() == reference.packedBytes(), "\(rotation) of \(width)x\(width / 2 + 9)")
            }
        }
    }
}
