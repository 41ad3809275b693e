import Foundation
import FrameKit
import FrameTestSupport

/// H.264 decoding: FrameKit's file source (libavcodec into pooled I420 buffers, through a
/// session to a delegate) against `ffmpeg -threads N -i clip -f null -` on the same file with
/// the same decoder threads, in the same run.
struct DecodeResult: Codable {
    var size: String
    var frames: Int
    var threads: Int
    var framekit_fps: Double
    var ffmpeg_fps: Double
    /// FrameKit's time per frame over ffmpeg's (target ≤ 1.1).
    var ratio_ffmpeg: Double
}

enum DecodeSuite {
    static func run(work: URL, frames: Int, runs: Int) throws -> [DecodeResult] {
        guard FFmpegTool.isInstalled else {
            log("decode: skipped (no /usr/bin/ffmpeg; scripts/bootstrap installs it)")
            return []
        }
        let threads = min(4, max(1, ProcessInfo.processInfo.activeProcessorCount))
        var results: [DecodeResult] = []
        for (width, height) in [(1280, 720), (1920, 1080)] {
            let clip = work.appendingPathComponent("decode-\(height).mp4")
            try FFmpegTool.clip(
                clip, size: "\(width)x\(height)", frames: frames, codec: ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"])
            var ours: [Double] = []
            var theirs: [Double] = []
            for _ in 0..<runs { // interleaved, median of each
                let start = Timestamp.now()
                let r = try CaptureSuite.run(device: .file(clip), name: "h264", preset: .high, seconds: nil)
                precondition(r.frames_captured == frames, "decode bench: \(r.frames_captured) of \(frames) frames")
                ours.append(Double(frames) / Timestamp.now().seconds(since: start))
                let ffStart = Timestamp.now()
                try FFmpegTool.run(["-threads", "\(threads)", "-i", clip.path, "-f", "null", "-"])
                theirs.append(Double(frames) / Timestamp.now().seconds(since: ffStart))
            }
            let framekit = ours.sorted()[runs / 2]
            let ffmpeg = theirs.sorted()[runs / 2]
            results.append(
                DecodeResult(
                    size: "\(width)x\(height)", frames: frames, threads: threads, framekit_fps: framekit, ffmpeg_fps: ffmpeg,
                    ratio_ffmpeg: ffmpeg / framekit))
        }
        return results
    }
}
