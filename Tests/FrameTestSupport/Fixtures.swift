import Foundation
import FrameKit

/// The committed reference images and helpers shared by the test targets.
public enum Fixtures {
    public static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    /// scikit-image's `astronaut` (NASA, public domain): one frontal face. 512x512 JPEG.
    public static var astronaut: URL { folder.appendingPathComponent("astronaut.jpg") }
    /// scikit-image's `coffee` (public domain): a cup of coffee, no face. 600x400 JPEG.
    public static var coffee: URL { folder.appendingPathComponent("coffee.jpg") }
    /// The astronaut in gray, 256x256, binary PGM.
    public static var astronautGray: URL { folder.appendingPathComponent("astronaut-gray.pgm") }

    /// The package's root folder (for tests that run the built binaries).
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One folder per test process for everything the tests write, removed when the process
    /// exits: test runs left thousands of folders of clips and recordings behind in the
    /// system's temporary folder. (A process killed by a signal still leaves its one folder.)
    public static let temporaryRoot: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("framekit-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: Fixtures.temporaryRoot) }
        return url
    }()

    /// A fresh empty folder of this process's ``temporaryRoot``.
    public static func temporaryFolder(_ label: String = "framekit-test") -> URL {
        let url = temporaryRoot.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Peak signal-to-noise ratio between two buffers of the same size and format, in dB.
    public static func psnr(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        let x = a.packedBytes()
        let y = b.packedBytes()
        precondition(x.count == y.count && a.format == b.format, "PSNR needs buffers of one shape")
        var sum = 0.0
        for i in 0..<x.count {
            let d = Double(x[i]) - Double(y[i])
            sum += d * d
        }
        let mse = sum / Double(x.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// The fenced code blocks of `language` (```` ```yaml ````) in the package's file `document`,
    /// in order: what a doc test checks is what a reader pastes.
    public static func fencedBlocks(_ language: String, in document: String) throws -> [String] {
        let text = try String(contentsOf: packageRoot.appendingPathComponent(document), encoding: .utf8)
        var found: [String] = []
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```\(language)" {
                current = []
            } else if current != nil, line == "```" {
                found.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return found
    }
}
