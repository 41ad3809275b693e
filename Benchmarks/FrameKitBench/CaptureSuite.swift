import Foundation
import FrameKit
import Synchronization

struct CaptureResult: Codable {
    var source: String
    var preset: String
    var format: String
    var fps: Double
    /// From the moment the pipeline takes a frame from its source to the delegate call.
    var dequeue_to_delegate_ms_p50: Double
    var dequeue_to_delegate_ms_p99: Double
    var frames_captured: Int
    var frames_dropped: Int
    /// Pixel copies between the source's buffer and the delegate (0: the delegate reads the
    /// source's own buffer).
    var copies_per_frame: Int
    var rss_peak_mb: Double
    /// CPU time of the whole process over the run, as a share of one core.
    var cpu_percent_of_core: Double
}

/// User + system CPU seconds of this process so far.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(
        usage.ru_stime.tv_usec) / 1e6
}

/// A delegate that does nothing but measure.
final class Timer: VideoDataOutputSampleBufferDelegate {
    let state = Mutex((histogram: LatencyHistogram(), first: Timestamp?.none, last: Timestamp?.none, frames: 0, borrowed: 0))
    func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        let now = Timestamp.now()
        state.withLock { s in
            s.histogram.record(seconds: now.seconds(since: frame.dequeueInstant))
            if s.first == nil { s.first = now }
            s.last = now
            s.frames += 1
            if frame.pixelBuffer.isBorrowed { s.borrowed += 1 }
        }
    }
}

enum CaptureSuite {
    static func run(device: CaptureDevice, name: String, preset: SessionPreset, seconds: Double?, format: PixelFormat? = nil) throws
        -> CaptureResult
    {
        let session = CaptureSession()
        let output = VideoDataOutput()
        output.videoSettings = .init(pixelFormat: format)
        let timer = Timer()
        output.setSampleBufferDelegate(timer)
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: device))
            try session.setSessionPreset(preset)
            try session.addOutput(output)
        }
        let ended = DispatchSemaphore(value: 0)
        session.addObserver { if case .sourceEnded = $0 { ended.signal() } }
        let cpuStart = processCPUSeconds()
        let wallStart = Timestamp.now()
        try session.startRunning()
        if let seconds { _ = ended.wait(timeout: .now() + seconds) } else { ended.wait() }
        session.stopRunning()
        let cpu = (processCPUSeconds() - cpuStart) / Timestamp.now().seconds(since: wallStart) * 100
        let s = timer.state.withLock { $0 }
        let span = s.first.flatMap { f in s.last.map { $0.seconds(since: f) } } ?? 0
        let counts = output.counts
        return CaptureResult(
            source: name, preset: preset.rawValue,
            format: (format ?? session.inputs[0].activeFormat?.pixelFormat ?? .nv12FullRange).shortName,
            fps: s.frames > 1 ? Double(s.frames - 1) / span : 0,
            dequeue_to_delegate_ms_p50: s.histogram.percentileMilliseconds(50),
            dequeue_to_delegate_ms_p99: s.histogram.percentileMilliseconds(99),
            frames_captured: counts.captured, frames_dropped: counts.droppedTotal,
            copies_per_frame: s.frames > 0 && s.borrowed == s.frames ? 0 : 1,
            rss_peak_mb: Double(MemoryProbe.residentSet()?.peak ?? 0) / 1_048_576,
            cpu_percent_of_core: cpu)
    }
}
