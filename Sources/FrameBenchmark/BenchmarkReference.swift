import Dispatch
import Foundation
import FrameCore
import FramePixels
import Synchronization

/// The fixed workload a ``Benchmark`` (and `framekit bench`) times beside each run, in the same process: a 720p BGRA
/// frame copied, turned to gray and resized to half, on as many threads as the process may use
/// CPUs (`CPUAllowance`, as the pipeline's threads are chosen). Its rate moves with other work,
/// a task pinned to one core or a quota much as the pipeline's does, so a speed taken as a ratio
/// to it moves mostly where the pipeline does. Between machines it carries less far: the
/// pipeline is mostly a network's arithmetic, this mostly memory (one build read 0.056 and 0.026
/// on two 2-core VMs of one kind), so a baseline belongs to the runners it was saved on.
public enum BenchmarkReference {
    /// Workloads a second, timed now: the buffers made and touched first (page faults are not
    /// the workload), then the fastest of three passes in which every thread does sixteen (a
    /// pass another process interrupted is not the machine's speed; each pass is long enough
    /// that threads sharing one CPU cannot each finish inside a time slice of their own).
    public static func measure() -> Double {
        let threads = max(1, CPUAllowance.current.count)
        let perThread = 16
        let buffers = (0..<threads).map { _ in Buffers() }
        guard buffers.allSatisfy({ $0 != nil }) else { return 1 }
        let slots = Mutex(buffers)
        func pass() -> Double {
            let started = ContinuousClock.now
            DispatchQueue.concurrentPerform(iterations: threads) { index in
                // Each thread's own buffers, taken out of their slot for the pass (so that
                // nothing else refers to them and a write copies nothing) and put back after.
                guard var own = slots.withLock({ $0[index].take() }) else { return }
                for _ in 0..<perThread { own.work() }
                slots.withLock { $0[index] = own }
            }
            return (ContinuousClock.now - started) / .seconds(1)
        }
        _ = pass() // warm: caches, the kernels' dispatch, the threads
        let best = (0..<3).map { _ in pass() }.min() ?? 1
        return Double(threads * perThread) / max(1e-6, best)
    }

    private struct Buffers: Sendable {
        let source: PixelBuffer
        var copy: PixelBuffer
        var gray: PixelBuffer
        var half: PixelBuffer

        /// Nil only if 720p buffers cannot be made (a pixel budget set below 720p).
        init?() {
            guard let source = try? PixelBuffer(width: 1280, height: 720, format: .bgra32),
                let copy = try? PixelBuffer(width: 1280, height: 720, format: .bgra32),
                let gray = try? PixelBuffer(width: 1280, height: 720, format: .gray8),
                let half = try? PixelBuffer(width: 640, height: 360, format: .gray8)
            else { return nil }
            (self.source, self.copy, self.gray, self.half) = (source, copy, gray, half)
        }

        mutating func work() {
            copy.withUnsafeMutableBytes(ofPlane: 0) { destination, _ in
                source.withUnsafeBytes(ofPlane: 0) { bytes, _ in destination.copyMemory(from: bytes) }
            }
            // Same sizes and formats every time: these cannot fail.
            try? ColorConversion.convertToGray(copy, into: &gray)
            try? Resize.bilinear(gray, into: &half)
        }
    }
}
