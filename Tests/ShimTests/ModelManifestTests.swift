import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("Models/ and its manifest")
struct ModelManifestTests {
    struct Manifest: Decodable {
        struct Entry: Decodable {
            let file: String
            let sha256: String
            let bytes: Int
            let licence: String
            let detects: String
        }
        let models: [Entry]
    }

    @Test("every model file matches the SHA-256 and size in MANIFEST.json")
    func manifestMatchesFiles() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Models")
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("MANIFEST.json")))
        #expect(!manifest.models.isEmpty)
        for entry in manifest.models {
            let url = folder.appendingPathComponent(entry.file)
            let data = try Data(contentsOf: url)
            #expect(data.count == entry.bytes, "\(entry.file)")
            let digest = try sha256(of: url)
            #expect(digest == entry.sha256, "\(entry.file): \(digest)")
            #expect(!entry.licence.isEmpty && !entry.detects.isEmpty)
        }
    }

    @Test("the default model is found with no path, from the built resources first")
    func defaultModelFound() throws {
        let url = try #require(ModelCatalog.url(forModel: ModelCatalog.defaultFaceModel))
        #expect(url.lastPathComponent == ModelCatalog.defaultFaceModel)
        #expect(try FaceDetector().modelURL == url)
        let haar = try #require(ModelCatalog.url(forModel: ModelCatalog.haarFaceModel))
        #expect(try HaarFaceDetector().modelURL == haar)
    }

    private func sha256(of url: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(output.prefix(64))
    }
}
