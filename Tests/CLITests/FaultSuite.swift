import Foundation
import FrameTestSupport

/// What the CLI's fault suites share: the binary, a short run of it on the virtual camera, and
/// a shell to run it in.
protocol FaultSuite {}

extension FaultSuite {
    static var framekit: String { BinaryRunner.productsFolder.appendingPathComponent("framekit").path }
    static var quick: [String] { ["detect", "--device", "virtual", "--preset", "vga640x480", "--input-size", "320"] }

    static func shell(_ script: String) throws -> BinaryRun {
        try BinaryRunner.runTool("/bin/bash", ["-c", script])
    }
}
