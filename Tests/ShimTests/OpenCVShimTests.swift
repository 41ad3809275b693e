import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("OpenCV face detection through COpenCVShim")
struct OpenCVShimTests {
    @Test("the default Haar model finds exactly one face in the astronaut photo, where her face is")
    func astronautHasOneFace() throws {
        let detector = try HaarFaceDetector()
        let faces = try detector.detect(in: PixelBuffer(contentsOf: Fixtures.astronaut))
        #expect(faces.count == 1)
        // Her face (brow to chin, ear to ear) spans about x 170…275, y 60…165 of the 512x512 photo.
        let face = try #require(faces.first).bounds
        #expect(face.iou(Rect(x: 170, y: 60, width: 105, height: 105)) > 0.6, "found \(face)")
    }

    @Test("no face in a photo without one")
    func coffeeHasNoFace() throws {
        let faces = try HaarFaceDetector().detect(in: PixelBuffer(contentsOf: Fixtures.coffee))
        #expect(faces.isEmpty)
    }

    @Test("detection works on every pixel format the capture path delivers", arguments: PixelFormat.allCases)
    func everyFormat(format: PixelFormat) throws {
        let image = try JPEG.decode(ImageFile.read(Fixtures.astronaut), to: format)
        #expect(try HaarFaceDetector().detect(in: image).count == 1)
    }

    @Test(
        "a region of a colour frame: the same face as in the whole frame, in the frame's coordinates",
        arguments: [PixelFormat.rgb24, .bgra32, .yuyv])
    func regionOfColourFrame(format: PixelFormat) throws {
        let image = try JPEG.decode(ImageFile.read(Fixtures.astronaut), to: format)
        let detector = try HaarFaceDetector()
        let whole = try #require(detector.detect(in: image).first).bounds
        // An odd origin: a Y'CbCr crop must still start on a pixel pair.
        let inRegion = try detector.detect(in: image, region: Rect(x: 121, y: 11, width: 230, height: 230))
        #expect(inRegion.count == 1)
        #expect((inRegion.first?.bounds.iou(whole) ?? 0) > 0.8, "\(String(describing: inRegion.first)) vs \(whole)")
        #expect(try detector.detect(in: image, region: Rect(x: 380, y: 300, width: 120, height: 120)).isEmpty)
    }

    @Test("a corrupt cascade file raises OpenCV's C++ exception as a Swift error")
    func corruptModel() throws {
        let folder = Fixtures.temporaryFolder()
        let corrupt = folder.appendingPathComponent("corrupt.xml")
        try Data("<?xml version=\"1.0\"?>\n<opencv_storage><cascade><stageType>BOOST<".utf8).write(to: corrupt)
        do {
            _ = try HaarFaceDetector(modelURL: corrupt)
            Issue.record("a corrupt model loaded")
        } catch let FaceDetectorError.modelLoadFailed(path, message) {
            #expect(path == corrupt.path)
            #expect(message.contains("OpenCV") || message.contains("Parsing"), "message: \(message)")
        }
        try expectRefused(emptyAndMissing: "xml") { try HaarFaceDetector(modelURL: $0) }
    }

    @Test("invalid options are thrown errors")
    func invalidOptions() {
        #expect(throws: FaceDetectorError.self) { try HaarFaceDetector(options: .init(scaleFactor: 1.0)) }
        #expect(throws: FaceDetectorError.self) { try HaarFaceDetector(options: .init(detectionScale: 0)) }
    }
}
