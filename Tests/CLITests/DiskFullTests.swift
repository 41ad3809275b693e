import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A real full disk: a 2 MB tmpfs mounted for the test (root only: CI runs as root).
@Suite(
    "A full disk (a 2 MB tmpfs): every file complete or absent, exit 74", .serialized,
    .enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
struct DiskFullTests {
    /// A fresh 2 MB tmpfs, unmounted when `body` returns.
    func withFullDisk(_ body: (URL) throws -> Void) throws {
        let folder = Fixtures.temporaryFolder("disk-full")
        let mount = try BinaryRunner.runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", folder.path])
        try #require(mount.status == 0, "mount: \(mount.stderr)")
        defer { _ = try? BinaryRunner.runTool("/bin/umount", [folder.path]) }
        try body(folder)
    }

    func contents(_ folder: URL) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() }

    /// `framekit record` of the virtual camera at VGA into `file` until the disk fills: exit 74,
    /// the summary's frame count and why it ended.
    func recordUntilFull(_ file: URL) throws -> (frames: Int, endedBy: String) {
        let run = try BinaryRunner.run(
            "framekit", ["record", "--output", file.path, "--device", "virtual", "--preset", "vga640x480", "--duration", "60"])
        #expect(run.status == 74, "\(run.status) \(run.stderr)")
        let summary = try #require(try run.jsonLines().first)
        return (try #require(summary["frames"] as? Int), summary["ended_by"] as? String ?? "")
    }

    @Test(
        "record .avi until the disk is full: exit 74, the file ends indexed at its last complete frame, every frame readable by OpenCV's own reader"
    )
    func recordAVI() throws {
        try withFullDisk { folder in
            let file = folder.appendingPathComponent("clip.avi")
            let (frames, endedBy) = try recordUntilFull(file)
            #expect(frames > 10 && endedBy.contains("disk is full"), "\(frames) \(endedBy)")
            let probe = try OpenCV.probeVideo(file.path, ownMJPEGReader: true)
            // Every slot reads (frames dropped while recording are empty chunks: the last picture again).
            #expect(probe.decodedFrames == probe.headerFrames && probe.headerFrames >= frames, "\(probe) vs \(frames) written")
            #expect(contents(folder) == ["clip.avi"], "left behind: \(contents(folder))")
        }
    }

    @Test(
        "record .mp4 until the disk is full: exit 74, the file cut back to its last whole fragment, ffprobe reads exactly the frames the summary counts, with no error"
    )
    func recordMP4() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap installs ffmpeg (ffprobe)")
        try withFullDisk { folder in
            // ~100 KB left: H.264 at VGA fills it in about 10 s of the virtual camera.
            let filler = folder.appendingPathComponent("filler")
            try Data(count: 1_990_000).write(to: filler)
            let file = folder.appendingPathComponent("clip.mp4")
            let (frames, endedBy) = try recordUntilFull(file)
            #expect(frames > 30 && endedBy.contains("No space left"), "\(frames) \(endedBy)")
            // The summary's count was every packet handed to the muxer (782 where the file held 725).
            let probe = try FFmpegTool.probe(file)
            #expect(probe.errors.isEmpty, "ffprobe: \(probe)")
            #expect(probe.frames == frames, "ffprobe \(probe) vs \(frames)")
            #expect(contents(folder) == ["clip.mp4", "filler"], "left behind: \(contents(folder))")
        }
    }

    @Test("detect --annotate onto a full disk: exit 74, the stream absent (never half-written), the stats file complete")
    func annotate() throws {
        try withFullDisk { folder in
            let stream = folder.appendingPathComponent("boxed.mjpeg")
            let stats = folder.appendingPathComponent("s.json")
            let run = try BinaryRunner.run(
                "framekit",
                [
                    "detect", "--device", "virtual", "--preset", "vga640x480", "--frames", "300", "--annotate", stream.path, "--stats",
                    stats.path
                ])
            #expect(run.status == 74, "\(run.status) \(run.stderr)")
            #expect(!FileManager.default.fileExists(atPath: stream.path))
            let document = try JSONSerialization.jsonObject(with: Data(contentsOf: stats)) as? [String: Any]
            #expect(document?["frames_captured"] != nil, "the stats file is not a whole document")
            #expect(contents(folder) == ["s.json"], "left behind: \(contents(folder))")
        }
    }

    @Test("detect --stats onto a disk with no room at all: exit 74, no stats file and no temporary one")
    func statsNoRoom() throws {
        try withFullDisk { folder in
            // Fill the disk first.
            let filler = folder.appendingPathComponent("filler")
            _ = FileManager.default.createFile(atPath: filler.path, contents: nil)
            let handle = try FileHandle(forWritingTo: filler)
            let block = Data(repeating: 7, count: 64 << 10)
            while (try? handle.write(contentsOf: block)) != nil {}
            try? handle.close()
            let stats = folder.appendingPathComponent("s.json")
            let run = try BinaryRunner.run("framekit", ["detect", "--device", "virtual", "--frames", "30", "--stats", stats.path])
            #expect(run.status == 74 || run.status == 73, "\(run.status) \(run.stderr)")
            #expect(contents(folder) == ["filler"], "left behind: \(contents(folder))")
        }
    }
}
