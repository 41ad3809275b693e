import Foundation
import FrameCore
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

    @Test("the digest the loader checks is the manifest's, and SHA-256 agrees with sha256sum at every block boundary")
    func shippedDigest() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Models")
        let manifest = try JSONDecoder().decode(Manifest.self, from: Data(contentsOf: folder.appendingPathComponent("MANIFEST.json")))
        let entry = try #require(manifest.models.first { $0.file == ModelCatalog.defaultFaceModel })
        #expect(ModelCatalog.shippedSHA256[ModelCatalog.defaultFaceModel] == entry.sha256)
        #expect(try SHA256.hex(ofFileAt: folder.appendingPathComponent(entry.file).path) == entry.sha256)
        // FIPS 180-4's examples, then lengths around the padding's edges against sha256sum.
        #expect(SHA256.hex(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let file = Fixtures.temporaryFolder().appendingPathComponent("bytes")
        for length in [1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000] {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
            try data.write(to: file)
            #expect(SHA256.hex(of: data) == (try sha256(of: file)), "\(length) bytes")
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
