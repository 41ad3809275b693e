import Foundation
import FrameKit

/// The fixed workload `framekit bench` times beside each run, in the same process: a 720p BGRA
/// frame copied, turned to gray and resized to half, twenty times. Its rate moves with the
/// machine (a slower CPU, other work, a quota) as the pipeline's does, so a speed taken as a
/// ratio to it stays put where the machine changes and moves where the pipeline does.
enum BenchReference {
    /// Workloads a second, timed now.
    static func measure() -> Double {
        let count = 20
        let started = ContinuousClock.now
        for _ in 0..<count { work() }
        return Double(count) / max(1e-6, (ContinuousClock.now - started) / .seconds(1))
    }

    private static func work() {
        // The sizes are constants: none of these can throw; a failure would be FrameKit's bug,
        // and the workload then does less, which shows as a faster reference, never a trap.
        guard let source = try? PixelBuffer(width: 1280, height: 720, format: .bgra32),
            var copy = try? PixelBuffer(width: 1280, height: 720, format: .bgra32),
            var gray = try? PixelBuffer(width: 1280, height: 720, format: .gray8),
            var half = try? PixelBuffer(width: 640, height: 360, format: .gray8)
        else { return }
        copy.withUnsafeMutableBytes(ofPlane: 0) { destination, _ in
            source.withUnsafeBytes(ofPlane: 0) { bytes, _ in destination.copyMemory(from: bytes) }
        }
        try? ColorConversion.convertToGray(copy, into: &gray)
        try? Resize.bilinear(gray, into: &half)
    }
}
