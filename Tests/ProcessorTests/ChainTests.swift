import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("Processor chains, detection options and annotation")
struct ChainTests {
    func frame(_ buffer: PixelBuffer, _ n: UInt64 = 0) -> SampleBuffer {
        SampleBuffer(pixelBuffer: buffer, presentationTime: Double(n) / 30, sequenceNumber: n, captureInstant: .now())
    }

    @Test("a chain runs stages in order, times each, and carries the faces with the frame")
    func chainOrder() throws {
        let photo = try ReferenceImages.load(Fixtures.astronaut, as: .nv12VideoRange)
        let chain = ProcessorChain([
            FaceDetectionProcessor(detector: try HaarFaceDetector()), BlurStage(.gaussian, size: .three),
            GrayFilterStage(.sobelMagnitude)
        ])
        var f = frame(photo)
        try chain.run(&f)
        #expect(f.stageDurations.map(\.stage) == ["detect", "gaussian-blur-3", "sobel"])
        #expect(f.stageDurations.allSatisfy { $0.seconds > 0 })
        #expect(f.faces.count == 1)
        #expect(f.pixelBuffer.format == .gray8 && f.pixelBuffer.width == 512)
        // The result is the same as the filters called directly on the luma.
        var blurred = try PixelBuffer(width: 512, height: 512, format: .gray8)
        var edges = blurred.copy()
        try Filters.gaussianBlur(photo.lumaPlane(), into: &blurred, size: .three)
        try Filters.sobelMagnitude(blurred, into: &edges)
        #expect(f.pixelBuffer.packedBytes() == edges.packedBytes())
    }

    @Test("steady state reuses each stage's buffer; a frame still held is never overwritten")
    func scratchReuse() throws {
        let photo = try ReferenceImages.load(Fixtures.coffee, as: .bgra32)
        let chain = ProcessorChain([ConvertStage(to: .gray8), try ResizeStage(width: 300, height: 200)])
        func address(_ b: PixelBuffer) -> UnsafeRawPointer { b.withUnsafeBytes(ofPlane: 0) { raw, _ in raw.baseAddress! } }
        var first = frame(photo, 0)
        try chain.run(&first)
        let firstAddress = address(first.pixelBuffer)
        let firstBytes = first.pixelBuffer.packedBytes()
        first = frame(photo, 99) // released
        var second = frame(photo, 1)
        try chain.run(&second)
        #expect(address(second.pixelBuffer) == firstAddress) // same buffer, no allocation
        // Holding `second` while running a third: the third must not overwrite it.
        var third = frame(
            try ReferenceImages.load(Fixtures.astronaut, as: .bgra32).cropped(to: Rect(x: 0, y: 0, width: 512, height: 400)), 2)
        third.pixelBuffer = try PixelFormatConversion.convert(third.pixelBuffer, to: .bgra32)
        _ = third
        var other = frame(try PixelBuffer(width: 600, height: 400, format: .bgra32), 3)
        try chain.run(&other)
        #expect(second.pixelBuffer.packedBytes() == firstBytes)
        #expect(address(other.pixelBuffer) != address(second.pixelBuffer))
    }

    @Test("a transform stage refuses a rotation the format cannot take, and says so, before making a buffer")
    func transformStageRefuses() throws {
        // 64x31 YUYV turned would be 31 wide, which YUYV cannot be: the rotation must be what is refused.
        var yuyv = frame(try PixelBuffer(width: 64, height: 31, format: .yuyv))
        #expect {
            try TransformStage(rotation: .clockwise90).process(&yuyv)
        } throws: { error in
            guard case PixelBufferError.unsupportedFormat(.yuyv, _)? = error as? PixelBufferError else { return false }
            return true
        }
        var gray = frame(try PixelBuffer(width: 64, height: 31, format: .gray8))
        try TransformStage(rotation: .clockwise90).process(&gray)
        #expect(gray.pixelBuffer.width == 31 && gray.pixelBuffer.height == 64)
    }

    @Test("detection options: a down-scaled search still finds the face, in full-frame coordinates")
    func detectionScale() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let full = try HaarFaceDetector().detect(in: photo)
        let fast = try HaarFaceDetector(options: .init(scaleFactor: 1.2, minNeighbors: 3, detectionScale: 0.5)).detect(in: photo)
        try #require(full.count == 1 && fast.count == 1)
        #expect(full[0].bounds.iou(fast[0].bounds) > 0.6, "\(full[0].bounds) vs \(fast[0].bounds)")
        // A region that holds the face finds it; one that does not, finds nothing.
        let detector = try HaarFaceDetector()
        #expect(try detector.detect(in: photo, region: Rect(x: 120, y: 20, width: 220, height: 220)).count == 1)
        #expect(try detector.detect(in: photo, region: Rect(x: 0, y: 300, width: 200, height: 200)).isEmpty)
        // Partly outside: the part inside is searched. Wholly outside, or empty: a mistake, said
        // as one (it returned no faces, as if it had looked), by both detectors.
        #expect(try detector.detect(in: photo, region: Rect(x: 120, y: -100, width: 220, height: 340)).count == 1)
        let cnn = try FaceDetector()
        for region in [Rect(x: 600, y: 0, width: 100, height: 100), Rect(x: 10, y: 10, width: 0, height: 50)] {
            let want = PixelBufferError.regionOutsideImage(region, width: 512, height: 512, format: photo.format)
            for search in [{ try detector.detect(in: photo, region: region) }, { try cnn.detect(in: photo, region: region) }] {
                do {
                    let faces = try search()
                    Issue.record("\(region): \(faces.count) faces, no error")
                } catch {
                    guard case .pixelBuffer(let e) = error as? FaceDetectorError else {
                        Issue.record("\(region): \(error)")
                        continue
                    }
                    #expect(e == want && "\(e)".contains("not inside the 512x512 image"), "\(e)")
                }
            }
        }
        // A tracker's pass over a region outside the frame finds nothing, without an error.
        #expect(try detector.pass(in: photo, region: Rect(x: 600, y: 0, width: 100, height: 100), candidatesDownTo: 0.3).faces.isEmpty)
        // Faces bigger than the maximum are not reported.
        #expect(try HaarFaceDetector(options: .init(maxFaceSize: 60)).detect(in: photo).isEmpty)
    }

    @Test("face boxes are drawn in every format, where the face is", arguments: PixelFormat.allCases)
    func annotation(format: PixelFormat) throws {
        var image = try ReferenceImages.load(Fixtures.astronaut, as: format)
        let box = Rect(x: 170, y: 60, width: 106, height: 106)
        Annotation.drawBoxes([box], on: &image)
        let rgb = try PixelFormatConversion.convert(image, to: .rgb24)
        let edge = rgb.withUnsafeBytes(ofPlane: 0) { b, p in Array(b[(61 * p.bytesPerRow + 220 * 3)..<(61 * p.bytesPerRow + 220 * 3 + 3)]) }
        if format == .gray8 {
            #expect(edge == [255, 255, 255])
        } else {
            #expect(edge[1] > 200 && edge[0] < 60 && edge[2] < 60, "\(edge)")
        }
        // Inside the box, untouched.
        let original = try PixelFormatConversion.convert(ReferenceImages.load(Fixtures.astronaut, as: format), to: .rgb24)
        let inside = { (b: PixelBuffer) in b.withUnsafeBytes(ofPlane: 0) { raw, p in raw[120 * p.bytesPerRow + 220 * 3] } }
        #expect(inside(rgb) == inside(original))
    }

    @Test("drawFaces marks each landmark where it is (white ringed in black) beside the box; points far off or NaN are skipped")
    func landmarks() throws {
        var image = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let faces = try FaceDetector().detect(in: image)
        let face = try #require(faces.first)
        let odd = Face(bounds: face.bounds, confidence: 0.5, landmarks: [Point(x: .nan, y: 3), Point(x: 1e300, y: -1e300)])
        Annotation.drawFaces(faces + [odd], on: &image)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] {
            image.withUnsafeBytes(ofPlane: 0) { b, p in Array(b[(y * p.bytesPerRow + x * 3)..<(y * p.bytesPerRow + x * 3 + 3)]) }
        }
        let half = max(1, min(face.bounds.width, face.bounds.height) / 40)
        for point in face.landmarks {
            let (x, y) = (Int(point.x.rounded()), Int(point.y.rounded()))
            #expect(pixel(x, y) == [255, 255, 255], "landmark at \(x),\(y)")
            #expect(pixel(x + half + 1, y) == [0, 0, 0], "its ring at \(x + half + 1),\(y)")
        }
        // The box is drawn as drawBoxes draws it.
        #expect(pixel(face.bounds.x + face.bounds.width / 2, face.bounds.y) == [0, 255, 0])
    }

    @Test("the research quick start works as documented")
    func quickStart() throws {
        let image = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let detector = try FaceDetector() // CenterFace, a CNN
        let faces = try detector.detect(in: image) // [Face]: bounds, confidence, landmarks
        #expect(faces.count == 1 && faces[0].bounds.width > 50 && faces[0].landmarks.count == 5)
        let haar = try HaarFaceDetector() // OpenCV's Haar cascade
        #expect(try haar.detect(in: image).count == 1)
    }
}
