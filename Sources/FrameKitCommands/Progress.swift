import Dispatch
import Foundation
import FrameKit
import Synchronization

/// The live one-line progress on a terminal's stderr: results, fps, drops, latency. Its counts
/// are the run's own (the summary's), not the output's: the output counts a frame delivered as
/// it hands it over, before a `--frames` limit decides the run has had enough, so its figure
/// could run one ahead of the summary's.
final class Progress {
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "framekit.progress")
    private let render: @Sendable () -> Void

    init(counts: @escaping @Sendable () -> OutputCounts, stats: StatsRecorder) {
        render = {
            let c = counts()
            let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: c)
            let line = String(
                format: "\r%6d delivered  %5.1f fps  %d dropped  latency p50 %.1f ms  p99 %.1f ms  ",
                c.delivered, s.fps, c.droppedTotal, s.latencyMilliseconds.p50, s.latencyMilliseconds.p99)
            Console.errRaw(line)
        }
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 0.5, repeating: 0.5)
        timer.setEventHandler(handler: render)
        timer.resume()
    }

    /// Stops the ticks and draws the line once more with the final figures (the last tick's
    /// could be up to half a second old), then ends it. On the ticks' own queue: `cancel()`
    /// does not wait for a tick already under way, which on a loaded machine drew its line after
    /// this one's end, onto the summary's line.
    func stop() {
        timer.cancel()
        queue.sync {
            render()
            Console.errRaw("\n")
        }
    }
}
