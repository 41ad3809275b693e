import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// `--model`, the shipped model's digest, and photos read as unrelated pictures: through the
/// real binary.
@Suite("framekit detect: --model and stills")
struct ModelAndStillsTests {
    static func summary(_ run: BinaryRun) throws -> [String: Any] {
        try #require(try run.summary(), "\(run.stdout) \(run.stderr)")
    }

    @Test("--model: another file of CenterFace's form runs; a missing file, a non-model or another form exits 65 naming why")
    func modelOption() throws {
        let folder = Fixtures.temporaryFolder()
        let shipped = try FaceDetector().modelURL
        let copy = folder.appendingPathComponent("my-export.onnx")
        try FileManager.default.copyItem(at: shipped, to: copy)
        let args = ["detect", "--input", Fixtures.astronaut.path]
        let ran = try BinaryRunner.run("framekit", args + ["--model", copy.path])
        #expect(ran.status == 0, "\(ran.stderr)")
        #expect(try Self.summary(ran)["model_file"] as? String == copy.path)
        let faces = try #require(ran.jsonLines().first?["faces"] as? [[String: Any]])
        #expect(faces.count == 1)

        let text = folder.appendingPathComponent("notes.onnx")
        try Data("not a network\n".utf8).write(to: text)
        var bytes = try Data(contentsOf: shipped)
        let output = try #require(bytes.firstRange(of: Data([0x62, 0x1D, 0x0A, 0x03] + Array("540".utf8))))
        bytes[output.lowerBound + 5] = UInt8(ascii: "2") // the graph's last output is another value
        let other = folder.appendingPathComponent("other.onnx")
        try bytes.write(to: other)
        for (file, reason) in [
            (folder.appendingPathComponent("absent.onnx"), "no readable file there"), (text, "not a readable ONNX model"),
            (other, "not a network of CenterFace's form")
        ] {
            let run = try BinaryRunner.run("framekit", args + ["--model", file.path])
            #expect(run.status == 65, "\(file.lastPathComponent): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(reason), "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
    }

    @Test(
        "the shipped model (beside the binary) with one byte changed is refused: exit 65, both digests; the same file in FRAMEKIT_MODELS is the user's and runs"
    )
    func damagedShippedModel() throws {
        var bytes = try Data(contentsOf: try FaceDetector().modelURL)
        bytes[bytes.count / 2] ^= 0x01
        // A copy of the binary with a resource bundle of its own beside it, as an install has.
        let bin = Fixtures.temporaryFolder().appendingPathComponent("bin")
        let bundle = bin.appendingPathComponent("Copy_FrameModels.resources")
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: BinaryRunner.productsFolder.appendingPathComponent("framekit"), to: bin.appendingPathComponent("framekit"))
        try bytes.write(to: bundle.appendingPathComponent(ModelCatalog.defaultFaceModel))
        var environment = ProcessInfo.processInfo.environment
        environment["FRAMEKIT_MODELS"] = nil
        let args = ["detect", "--input", Fixtures.astronaut.path]
        let run = try BinaryRunner.runTool(bin.appendingPathComponent("framekit").path, args, environment: environment)
        #expect(run.status == 65, "\(run.status) \(run.stderr)")
        #expect(run.stderr.contains("SHA-256") && run.stderr.contains("MANIFEST.json"), "\(run.stderr)")
        #expect(run.stderr.contains(bundle.path), "\(run.stderr)")

        environment["FRAMEKIT_MODELS"] = bundle.path
        let own = try BinaryRunner.run("framekit", args, environment: environment)
        #expect(own.status == 0, "\(own.status) \(own.stderr)")
        #expect(try Self.summary(own)["model_file"] as? String == bundle.appendingPathComponent(ModelCatalog.defaultFaceModel).path)
    }

    @Test("a folder of photos: each gets the faces it gets alone (nothing carried across), in full mode at its own resolution")
    func photosAreStills() throws {
        let folder = Fixtures.temporaryFolder().appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // A face, a photo with none, the same face again: a tracker would carry the first
        // photo's face into the second, and its pass on the third might not come.
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("1.jpg"))
        try FileManager.default.copyItem(at: Fixtures.coffee, to: folder.appendingPathComponent("2.jpg"))
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("3.jpg"))
        let run = try BinaryRunner.run("framekit", ["detect", "--input", folder.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.jsonLines()
        let frames = lines.compactMap { $0["faces"] as? [[String: Any]] }
        #expect(frames.count == 3)
        let summary = try Self.summary(run)
        #expect(summary["mode"] as? String == "full")
        #expect(summary["full_resolution"] as? Bool == true)
        for (photo, index) in [(Fixtures.astronaut, 0), (Fixtures.coffee, 1), (Fixtures.astronaut, 2)] where index < frames.count {
            let alone = try BinaryRunner.run("framekit", ["detect", "--input", photo.path])
            let faces = try #require(alone.jsonLines().first?["faces"] as? [[String: Any]])
            // The same boxes to a pixel (the folder's reader and the single image's may round
            // a chroma sample differently).
            let (inFolder, single) = (Self.boxes(frames[index]), Self.boxes(faces))
            #expect(inFolder.count == single.count, "photo \(index): \(inFolder) alone \(single)")
            for (a, b) in zip(inFolder, single) { #expect(zip(a, b).allSatisfy { abs($0 - $1) <= 1 }, "photo \(index): \(a) \(b)") }
        }
        #expect(frames.first.map(Self.boxes)?.count == 1 && frames.dropFirst().first?.isEmpty == true)

        // Asked for, tracking still runs on photos; video keeps tracking.
        let tracked = try Self.summary(try BinaryRunner.run("framekit", ["detect", "--input", folder.path, "--mode", "tracking"]))
        #expect(tracked["mode"] as? String == "tracking" && tracked["full_resolution"] as? Bool == false)
        // A tracking option with no --mode asks for tracking too (it is not dropped unsaid).
        let tiles = try Self.summary(try BinaryRunner.run("framekit", ["detect", "--input", folder.path, "--tiles", "off"]))
        #expect(tiles["mode"] as? String == "tracking")
        let video = try Self.summary(
            try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "2"]))
        #expect(video["mode"] as? String == "tracking" && video["full_resolution"] as? Bool == false)
    }

    static func boxes(_ faces: [[String: Any]]) -> [[Int]] {
        faces.map { f in ["x", "y", "width", "height"].map { f[$0] as? Int ?? -1 } }
    }
}
