import Foundation
import FrameTestSupport
import Testing

/// `framekit detect --input` with a video file and a live stream (#16), through the binary.
@Suite("framekit detect on video files and streams", .serialized)
struct MediaCommandTests {
    @Test("detect --input clip.mp4: one JSON line per frame, then the summary; a face in the clip is found")
    func mp4() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg")
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("face.mp4")
        // The astronaut photo as a 3 s H.264 clip: a real face for the detector.
        try FFmpegTool.run([
            "-loop", "1", "-i", Fixtures.astronaut.path, "-t", "3", "-r", "30", "-vf", "scale=640:640,format=yuv420p", "-c:v", "libx264",
            clip.path
        ])
        let run = try BinaryRunner.run("framekit", ["detect", "--input", clip.path])
        #expect(run.status == 0, "\(run.stderr)")
        let objects = try run.jsonLines()
        let summary = try #require(objects.last?["summary"] as? [String: Any])
        #expect(summary["frames_captured"] as? Int == 90 && summary["width"] as? Int == 640)
        let withFace = objects.dropLast().filter { ($0["faces"] as? [Any])?.count == 1 }
        #expect(withFace.count >= 85, "\(withFace.count) of 90 frames with the one face")
    }

    @Test("detect --input tcp://… reads a live stream in real time; a stream that is not there is exit 1 naming it")
    func liveStream() throws {
        try #require(FFmpegTool.isInstalled)
        let port = Int.random(in: 20_000...60_000)
        let server = try FFmpegTool.serveTCP(port: port, seconds: 4)
        defer { server.terminate() }
        Thread.sleep(forTimeInterval: 0.7)
        let run = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:\(port)", "--duration", "2"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try #require(try run.jsonLines().last?["summary"] as? [String: Any])
        #expect((summary["frames_captured"] as? Int ?? 0) >= 40 && summary["source"] as? String == "tcp://127.0.0.1:\(port)")
        let missing = try BinaryRunner.run("framekit", ["detect", "--input", "tcp://127.0.0.1:1"])
        #expect(missing.status == 1 && missing.stderr.contains("tcp://127.0.0.1:1"), "\(missing.stderr)")
    }
}
