import Foundation
import FrameKit
import FrameTestSupport
import Testing

@testable import FrameKitCommands

/// The progress line: its text, the length it estimates from, and `--progress` in a log.
@Suite("framekit detect's progress")
struct ProgressTests {
    private func counts(captured: Int, dropped: Int = 0) -> OutputCounts {
        var c = OutputCounts()
        c.captured = captured
        c.delivered = captured - dropped
        c.dropped = dropped > 0 ? [.frameWasLate: dropped] : [:]
        return c
    }

    @Test("of a known length: frames of the total, the share (never 100% before the end) and the time left at the rate so far")
    func text() {
        let latency = Percentiles(LatencyHistogram())
        let line = Progress.text(
            counts: counts(captured: 150, dropped: 3), fps: 29.5, latency: latency, expected: 600, seconds: 5, final: false)
        #expect(line.hasPrefix("150/600 frames (25%)  15 s left  29.5 fps  3 dropped"), "\(line)")
        // An estimate that ran short of the frames: 99% until the end, then what was seen.
        #expect(
            Progress.text(counts: counts(captured: 700), fps: 30, latency: latency, expected: 600, seconds: 20, final: false)
                .hasPrefix("700/600 frames (99%)  0 s left"))
        #expect(
            Progress.text(counts: counts(captured: 600), fps: 30, latency: latency, expected: 600, seconds: 20, final: true)
                .hasPrefix("600/600 frames (100%)  30.0 fps"))
        // Unknown length: frames only.
        #expect(
            Progress.text(counts: counts(captured: 42), fps: 30, latency: latency, expected: nil, seconds: 2, final: false)
                .hasPrefix("42 frames  30.0 fps"))
        #expect(Progress.duration(42) == "42 s" && Progress.duration(185) == "3 min 05 s" && Progress.duration(3720) == "1 h 02 min")
    }

    @Test("the length: the media's after --start, --frames and --duration, whichever is fewest; a camera's only from the limits")
    func expectedFrames() throws {
        let camera = CaptureDevice.virtualCamera
        #expect(DetectPipeline.Limits(frames: nil, duration: nil).expectedFrames(on: camera) == nil)
        #expect(DetectPipeline.Limits(frames: 90, duration: nil).expectedFrames(on: camera) == 90)
        #expect(DetectPipeline.Limits(frames: nil, duration: 2).expectedFrames(on: camera) == 60)
        let folder = Fixtures.temporaryFolder()
        for name in ["a.jpg", "b.jpg", "c.jpg", "d.jpg"] {
            try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent(name))
        }
        let photos = try CaptureDevice.file(folder)
        #expect(DetectPipeline.Limits(frames: nil, duration: nil).expectedFrames(on: photos) == 4)
        #expect(DetectPipeline.Limits(frames: 2, duration: nil).expectedFrames(on: photos) == 2)
    }

    @Test("--progress writes its lines to a stderr that is not a terminal, the last one at 100% of a clip of known length")
    func progressInALog() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let clip = Fixtures.temporaryFolder().appendingPathComponent("clip.mp4")
        try FFmpegTool.run(["-f", "lavfi", "-i", "testsrc=size=320x240:rate=30", "-frames:v", "45", "-pix_fmt", "yuv420p", clip.path])
        let run = try BinaryRunner.run("framekit", ["detect", "--input", clip.path, "--progress"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("progress: ") }
        #expect(lines.last?.contains("progress: 45/45 frames (100%)") == true, "\(run.stderr)")
        // Without it, and stderr not a terminal: no progress at all.
        let quiet = try BinaryRunner.run("framekit", ["detect", "--input", clip.path])
        #expect(quiet.status == 0 && !quiet.stderr.contains("progress"), "\(quiet.stderr)")
    }
}
