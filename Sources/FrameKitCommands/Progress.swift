import Dispatch
import Foundation
import FrameKit
import Synchronization

/// The live one-line progress on a terminal's stderr: results, fps, drops, latency.
final class Progress {
    private let timer: DispatchSourceTimer
    init(output: VideoDataOutput, stats: StatsRecorder) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "framekit.progress"))
        timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
        timer.setEventHandler {
            let c = output.counts
            let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: c)
            let line = String(
                format: "\r%6d delivered  %5.1f fps  %d dropped  latency p50 %.1f ms  p99 %.1f ms  ",
                c.delivered, s.fps, c.droppedTotal, s.latencyMilliseconds.p50, s.latencyMilliseconds.p99)
            Console.errRaw(line)
        }
        timer.resume()
    }
    func stop() {
        timer.cancel()
        Console.errRaw("\n")
    }
}
