import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// The CLI on forged, damaged or empty files: a header over the pixel budget, a forged PNG, a
/// folder with a damaged photo, inputs with no frame. Through the real binary.
@Suite("framekit on forged and damaged files")
struct HostileFileTests: FaultSuite {
    @Test("a Y4M whose header is over the pixel budget (8192x4096) is a data error naming the file: exit 65, not 1")
    func y4mOverBudget() throws {
        let y4m = Fixtures.temporaryFolder().appendingPathComponent("big.y4m")
        try Data("YUV4MPEG2 W8192 H4096 F30:1 Ip C420jpeg\nFRAME\n".utf8 + [UInt8](repeating: 0, count: 4096)).write(to: y4m)
        let run = try BinaryRunner.run("framekit", ["detect", "--input", y4m.path])
        #expect(run.status == 65 && run.stderr.contains("big.y4m") && run.stderr.contains("pixel budget"), "\(run.status) \(run.stderr)")
    }

    @Test("a forged PNG claiming 16000x16000 (1 MB on disk) is refused by name, exit 65, without FFmpeg's probe taking the gigabyte")
    func forgedHugePNG() throws {
        // Python writes the PNG (zlib) and runs framekit as its only child, so that
        // RUSAGE_CHILDREN's peak is framekit's own.
        let png = Fixtures.temporaryFolder().appendingPathComponent("huge.png").path
        let script = """
            import resource, struct, subprocess, sys, zlib
            def chunk(kind, data): return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            side = 16000
            packer = zlib.compressobj(9)
            row = bytes(1 + side * 4)
            data = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
            header = struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0)
            open(sys.argv[2], "wb").write(b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b""))
            run = subprocess.run([sys.argv[1], "detect", "--input", sys.argv[2]], capture_output=True, text=True)
            print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, run.stderr.strip())
            """
        let run = try BinaryRunner.runTool("/usr/bin/python3", ["-c", script, Self.framekit, png])
        let fields = run.stdout.split(separator: " ", maxSplits: 2)
        try #require(fields.count == 3, "\(run.stdout) \(run.stderr)")
        #expect(fields[0] == "65" && fields[2].contains("pixel budget") && fields[2].contains("huge.png"), "\(run.stdout)")
        // A run that refuses at once peaks near 64 MB; the unguarded probe took 1,037 MB.
        #expect(Int(fields[1]) ?? .max < 400, "peak RSS \(fields[1]) MB")
    }

    @Test(
        "a folder of photos of three sizes (one odd, one portrait): each a frame of its own size with its faces, none dropped; a damaged one is a corrupt drop stderr names"
    )
    func mixedSizeFolder() throws {
        let folder = Fixtures.temporaryFolder("mixed-sizes")
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut) // 512x512, one face
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("a.jpg"))
        // Portrait: the face on a taller canvas; odd: 301x333, the face shrunk into it.
        var portrait = try PixelBuffer(width: 512, height: 720, format: .rgb24)
        photo.withUnsafeBytes(ofPlane: 0) { src, sp in
            portrait.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                for i in 0..<dst.count { dst[i] = 90 }
                for row in 0..<512 {
                    for i in 0..<(512 * 3) { dst[(row + 104) * dp.bytesPerRow + i] = src[row * sp.bytesPerRow + i] }
                }
            }
        }
        try portrait.write(to: folder.appendingPathComponent("b.jpg"))
        var odd = try PixelBuffer(width: 301, height: 333, format: .rgb24)
        try Resize.bilinear(photo, into: &odd)
        try odd.write(to: folder.appendingPathComponent("c.jpg"))
        let run = try BinaryRunner.run("framekit", ["detect", "--input", folder.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = try run.jsonLines()
        let summary = try #require(lines.last?["summary"] as? [String: Any])
        #expect((summary["drops"] as? [String: Int])?["corrupt"] == 0 && summary["frames_delivered"] as? Int == 3, "\(summary)")
        let frames = lines.filter { $0["frame"] != nil }
        try #require(frames.count == 3, "\(lines)")
        // Each frame's faces in its own pixels: inside its image, one face each.
        for (frame, (w, h)) in zip(frames, [(512, 512), (512, 720), (301, 333)]) {
            #expect(frame["width"] as? Int == w && frame["height"] as? Int == h, "\(frame)")
            let faces = frame["faces"] as? [[String: Any]] ?? []
            #expect(faces.count == 1, "\(w)x\(h): \(frame)")
            for face in faces {
                let (x, y) = (face["x"] as? Int ?? -99, face["y"] as? Int ?? -99)
                let (fw, fh) = (face["width"] as? Int ?? 0, face["height"] as? Int ?? 0)
                #expect(x >= -1 && y >= -1 && fw > 20 && x + fw <= w + 1 && y + fh <= h + 1, "\(w)x\(h): \(face)")
            }
        }
        #expect(!run.stderr.contains("corrupt"), "\(run.stderr)")

        try Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00]).write(to: folder.appendingPathComponent("d.jpg")) // a damaged one
        let damaged = try BinaryRunner.run("framekit", ["detect", "--input", folder.path])
        #expect(damaged.status == 0 && damaged.stderr.contains("1 of its 4 images dropped as corrupt"), "\(damaged.stderr)")
    }

    @Test("an input with no frame at all — a Y4M header alone, --start past a clip's end — exits 65 saying so, not 0")
    func inputsWithoutFrames() throws {
        let folder = Fixtures.temporaryFolder()
        let header = folder.appendingPathComponent("header-only.y4m")
        try Data("YUV4MPEG2 W320 H240 F30:1 Ip A1:1 C420jpeg\n".utf8).write(to: header)
        let run = try BinaryRunner.run("framekit", ["detect", "--input", header.path])
        #expect(run.status == 65 && run.stderr.contains("no frame"), "\(run.status) \(run.stderr)")
        // An empty file (FFmpeg's own word for it is "Invalid data"): said as empty.
        let empty = folder.appendingPathComponent("empty.mp4")
        try Data().write(to: empty)
        let nothing = try BinaryRunner.run("framekit", ["detect", "--input", empty.path])
        #expect(nothing.status == 65 && nothing.stderr.contains("empty.mp4: the file is empty"), "\(nothing.status) \(nothing.stderr)")
        try #require(FFmpegTool.isInstalled)
        let clip = folder.appendingPathComponent("short.mp4")
        try FFmpegTool.clip(clip, frames: 15, codec: ["-c:v", "libx264"])
        let late = try BinaryRunner.run("framekit", ["detect", "--input", clip.path, "--start", "0.4"])
        #expect(late.status == 0, "frames from 0.4 s on: \(late.status) \(late.stderr)")
        // `frame` is the index in the file (12 at 0.4 s, 30 fps), and the summary names the
        // clip's own size, not the preset that chose it.
        let lines = try late.jsonLines()
        #expect(lines.first?["frame"] as? Int == 12, "\(lines.first ?? [:])")
        let lateSummary = try #require(lines.last?["summary"] as? [String: Any])
        #expect(lateSummary["preset"] as? String == "320x240", "\(lateSummary)")
        let past = try BinaryRunner.run("framekit", ["detect", "--input", clip.path, "--start", "30"])
        #expect(past.status == 65 && past.stderr.contains("--start"), "\(past.status) \(past.stderr)")

        // A PNG whose image data is damaged (through FFmpeg its error was once lost: 0 frames,
        // exit 0): FrameKit's reader decodes a lone image when it opens it, so it is refused
        // there, 65, naming the file and libpng's reason.
        let png = folder.appendingPathComponent("damaged.png")
        _ = try FFmpegTool.run(["-f", "lavfi", "-i", "testsrc2=size=160x120", "-frames:v", "1", png.path])
        var bytes = [UInt8](try Data(contentsOf: png))
        let idat = try #require((0..<(bytes.count - 4)).first { bytes[$0..<($0 + 4)].elementsEqual("IDAT".utf8) })
        for i in stride(from: idat + 20, to: bytes.count - 16, by: 1) { bytes[i] ^= 0x77 }
        try Data(bytes).write(to: png)
        let damaged = try BinaryRunner.run("framekit", ["detect", "--input", png.path, "--detector", "haar"])
        #expect(
            damaged.status == 65 && damaged.stderr.contains("damaged.png") && damaged.stderr.contains("PNG error"),
            "\(damaged.status) \(damaged.stderr)")
    }
}
