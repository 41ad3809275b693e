import Dispatch
import Foundation
import FrameKit
import Synchronization

/// A run's progress on stderr: on a terminal one line redrawn twice a second; with `--progress`
/// (CI logs, stderr not a terminal) a line of its own every few seconds. Frames so far, and for
/// an input of known length (a video file's duration, a folder's images, `--frames`,
/// `--duration`) the share done and the time left at the rate so far. Its counts are the run's
/// own (the summary's), not the output's: the output counts a frame delivered as it hands it
/// over, before a `--frames` limit decides the run has had enough, so its figure could run one
/// ahead of the summary's.
final class Progress {
    enum Style {
        /// Redrawn in place (`\r`) every half second.
        case terminal
        /// A whole line every `seconds`.
        case lines(every: Double)
    }

    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "framekit.progress")
    private let render: @Sendable (_ final: Bool) -> Void
    private let style: Style

    /// - Parameters:
    ///   - expectedFrames: the frames the run will see (delivered and dropped), when known.
    ///   - source: the source's name, for lines of several runs at once.
    init(
        counts: @escaping @Sendable () -> OutputCounts, stats: StatsRecorder, expectedFrames: Int?, style: Style,
        source: String? = nil
    ) {
        self.style = style
        let started = ContinuousClock.now
        render = { final in
            let c = counts()
            let s = stats.snapshot(preset: "", width: 0, height: 0, source: "", counts: c)
            let seconds = max(1e-3, (ContinuousClock.now - started) / .seconds(1))
            let text = Self.text(
                counts: c, fps: s.fps, latency: s.latencyMilliseconds, expected: expectedFrames, seconds: seconds, final: final)
            switch style {
            case .terminal: Console.errRaw("\r" + text + "  ")
            case .lines: Console.err("framekit: \(source.map { "\($0): " } ?? "")progress: " + text)
            }
        }
        timer = DispatchSource.makeTimerSource(queue: queue)
        let interval: Double
        switch style {
        case .terminal: interval = 0.5
        case .lines(let every): interval = every
        }
        timer.schedule(deadline: .now() + interval, repeating: interval)
        let tick = render
        timer.setEventHandler { tick(false) }
        timer.resume()
    }

    /// The line's text: frames seen, of how many and the share when known, the time left at the
    /// rate so far (not at the end), results a second, drops and latency.
    static func text(
        counts c: OutputCounts, fps: Double, latency: Percentiles, expected: Int?, seconds: Double, final: Bool
    ) -> String {
        let seen = c.captured
        var parts: [String]
        if let expected, expected > 0 {
            // The length is an estimate (a container's duration at its rate): never 100% before
            // the end, never more than 100%.
            let share = min(final ? 100 : 99, seen * 100 / expected)
            parts = ["\(seen)/\(expected) frames (\(share)%)"]
            if !final {
                let rate = Double(seen) / seconds
                let left = rate > 0 ? Double(max(0, expected - seen)) / rate : nil
                parts.append(left.map { "\(Self.duration($0)) left" } ?? "time left unknown")
            }
        } else {
            parts = ["\(seen) frames"]
        }
        parts += [
            String(format: "%.1f fps", fps), "\(c.droppedTotal) dropped",
            String(format: "latency p50 %.1f ms p99 %.1f ms", latency.p50, latency.p99)
        ]
        return parts.joined(separator: "  ")
    }

    /// Seconds as people read a wait: 42 s, 3 min 05 s, 1 h 02 min.
    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return String(format: "%d min %02d s", s / 60, s % 60) }
        return String(format: "%d h %02d min", s / 3600, (s % 3600) / 60)
    }

    /// Stops the ticks and draws the line once more with the final figures (the last tick's
    /// could be seconds old), then ends it. On the ticks' own queue: `cancel()` does not wait
    /// for a tick already under way, which on a loaded machine drew its line after this one's
    /// end, onto the summary's line.
    func stop() {
        timer.cancel()
        queue.sync {
            render(true)
            if case .terminal = style { Console.errRaw("\n") }
        }
    }
}
