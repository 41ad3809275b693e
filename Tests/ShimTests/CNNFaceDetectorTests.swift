import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("CenterFace (CNN) face detection: FaceDetector, checked against OpenCV's dnn module")
struct CNNFaceDetectorTests {
    @Test("one face in the astronaut photo, where her face is, with a confidence and five landmarks inside it")
    func astronaut() throws {
        let faces = try FaceDetector().detect(in: PixelBuffer(contentsOf: Fixtures.astronaut))
        #expect(faces.count == 1, "\(faces)")
        let face = try #require(faces.first)
        // Her face (brow to chin, ear to ear) spans about x 170…275, y 60…165 of the 512x512 photo.
        #expect(face.bounds.iou(Rect(x: 170, y: 60, width: 105, height: 115)) > 0.5, "found \(face.bounds)")
        #expect((face.confidence ?? 0) > 0.8)
        #expect(face.landmarks.count == 5)
        for p in face.landmarks {
            #expect(Double(face.bounds.x) <= p.x && p.x <= Double(face.bounds.maxX), "\(p)")
            #expect(Double(face.bounds.y) <= p.y && p.y <= Double(face.bounds.maxY), "\(p)")
        }
        // Eyes above the nose, the nose above the mouth corners; her right eye on the image's left.
        let l = face.landmarks
        #expect(l[0].x < l[1].x && max(l[0].y, l[1].y) < l[2].y && l[2].y < min(l[3].y, l[4].y))
    }

    @Test("no face in a photo without one")
    func coffee() throws {
        #expect(try FaceDetector().detect(in: PixelBuffer(contentsOf: Fixtures.coffee)).isEmpty)
    }

    @Test("the same face from every pixel format the capture path delivers", arguments: PixelFormat.allCases)
    func everyFormat(format: PixelFormat) throws {
        let reference = try FaceDetector().detect(in: PixelBuffer(contentsOf: Fixtures.astronaut))
        let image = try JPEG.decode(ImageFile.read(Fixtures.astronaut), to: format)
        let faces = try FaceDetector().detect(in: image)
        #expect(faces.count == 1)
        if let a = faces.first, let b = reference.first { #expect(a.bounds.iou(b.bounds) > 0.9, "\(a.bounds) vs \(b.bounds)") }
    }

    @Test("boxes and scores match OpenCV's own pipeline (cv::resize, blobFromImage, forward) on the same photo")
    func matchesOpenCVForwardPass() throws {
        let detector = try FaceDetector(options: .init(inputSize: 320, scoreThreshold: 0.3))
        // A frame with the face at a size the network sees at 320 px: the astronaut photo on its own.
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let ours = try detector.detect(in: photo)
        let theirs = try OpenCV.centerFace(
            model: detector.modelURL.path, rgb: photo, contentWidth: 320, contentHeight: 320,
            threshold: 0.3)
        #expect(ours.count == theirs.count, "ours \(ours.map(\.bounds)), OpenCV \(theirs)")
        let scale = 512.0 / 320
        for box in theirs {
            let r = Rect(
                x: Int((Double(box.x0) * scale).rounded()), y: Int((Double(box.y0) * scale).rounded()),
                width: Int((Double(box.x1 - box.x0) * scale).rounded()), height: Int((Double(box.y1 - box.y0) * scale).rounded()))
            let match = ours.max { $0.bounds.iou(r) < $1.bounds.iou(r) }
            #expect((match?.bounds.iou(r) ?? 0) > 0.95, "OpenCV \(r), ours \(String(describing: match?.bounds))")
            #expect(abs((match?.confidence ?? 0) - Double(box.score)) < 0.02)
        }
    }

    @Test("a face cut by the image's edge gets the visible part of its box, not its whole box moved inwards")
    func faceCutByTheEdge() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let whole = try #require(try FaceDetector().detect(in: photo).first).bounds
        // Cut off the left 35% of the face (the crop starts on an even column, as Y'CbCr needs).
        let cut = (whole.x + whole.width * 35 / 100) & ~1
        let cropped = try photo.cropped(to: Rect(x: cut, y: 0, width: photo.width - cut, height: photo.height)).copy()
        let faces = try FaceDetector().detect(in: cropped)
        let face = try #require(faces.first, "the face, 65% visible, is still found")
        #expect(face.bounds.x <= 2, "\(face.bounds)")
        // Where the face ends in the crop: its right edge stays put (within 10% of its width).
        let expectedRight = whole.maxX - cut
        #expect(abs(face.bounds.maxX - expectedRight) <= max(3, whole.width / 10), "\(face.bounds), face ends at \(expectedRight)")
        #expect(abs(face.bounds.y - whole.y) <= whole.height / 10 && abs(face.bounds.maxY - whole.maxY) <= whole.height / 10)
    }

    @Test("a region: only faces inside it, in the whole image's coordinates")
    func region() throws {
        let detector = try FaceDetector()
        let image = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let inside = try detector.detect(in: image, region: Rect(x: 100, y: 0, width: 256, height: 256))
        #expect(inside.count == 1)
        let whole = try detector.detect(in: image)
        #expect((inside.first?.bounds.iou(whole[0].bounds) ?? 0) > 0.85)
        #expect(try detector.detect(in: image, region: Rect(x: 300, y: 300, width: 200, height: 200)).isEmpty)
        // Wholly outside the image: a mistake said as one (it returned no faces, as if it had looked).
        #expect(throws: FaceDetectorError.self) { try detector.detect(in: image, region: Rect(x: 600, y: 600, width: 10, height: 10)) }
    }

    @Test("one detector at changing input sizes gives what a fresh detector gives at each")
    func changingSizes() throws {
        // OpenCV 4.6 fixes layer shapes at a network's first pass: reusing it at another size
        // gave dozens of garbage boxes before the detector kept one network per size.
        let image = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let shared = try FaceDetector()
        for size in [512, 256, 512, 320, 384, 512] {
            let options = FaceDetector.Options(inputSize: size)
            let fresh = try FaceDetector(options: options).detect(in: image)
            let reused = try shared.detect(in: image, region: nil, options: options)
            #expect(reused == fresh, "size \(size)")
        }
    }

    @Test("a corrupt, empty or missing model is a thrown error, never a print or a crash")
    func badModels() throws {
        let folder = Fixtures.temporaryFolder()
        let corrupt = folder.appendingPathComponent("corrupt.onnx")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: corrupt)
        #expect(throws: FaceDetectorError.self) { try FaceDetector(modelURL: corrupt) }
        try expectRefused(emptyAndMissing: "onnx") { try FaceDetector(modelURL: $0) }
    }

    @Test("invalid options are thrown errors")
    func invalidOptions() {
        #expect(throws: FaceDetectorError.self) { try FaceDetector(options: .init(inputSize: 8)) }
        #expect(throws: FaceDetectorError.self) { try FaceDetector(options: .init(scoreThreshold: 1.5)) }
        #expect(throws: FaceDetectorError.self) { try FaceDetector(options: .init(minFaceSize: 50, maxFaceSize: 20)) }
    }

    @Test("cost per call at 720p, printed (not asserted: speed lives in Benchmarks/)")
    func cost() throws {
        let frame = try PixelBuffer(width: 1280, height: 720, format: .nv12VideoRange)
        let detector = try FaceDetector()
        _ = try detector.detect(in: frame)
        let start = Date()
        for _ in 0..<5 { _ = try detector.detect(in: frame) }
        print("CenterFace 640x384 from 720p NV12: \(Date().timeIntervalSince(start) / 5 * 1000) ms per call")
    }
}

/// Expects `load` to refuse an empty model file and a missing one (each with extension `ext`)
/// with a FaceDetectorError.
func expectRefused(emptyAndMissing ext: String, _ load: (URL) throws -> any FaceDetecting) throws {
    let folder = Fixtures.temporaryFolder()
    let empty = folder.appendingPathComponent("empty.\(ext)")
    try Data().write(to: empty)
    for url in [empty, folder.appendingPathComponent("missing.\(ext)")] {
        #expect(throws: FaceDetectorError.self, "\(url.lastPathComponent)") { try load(url) }
    }
}
