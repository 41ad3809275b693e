import Foundation
import FrameKit
import FrameTestSupport
import Synchronization
import Testing

/// Seeded mutation fuzzing of every file reader: FrameKit's own (Y4M, MJPEG, JPEG images) and
/// libavformat/libavcodec's through the CFFmpeg shim (Matroska with forged timestamps, MP4,
/// PNG). Each mutant is opened and, where it opens, captured to its end: no trap, no hang,
/// every frame delivered or dropped with a reason. A crash fails the whole test process.
///
/// `FRAMEKIT_FUZZ_ITERATIONS` (default 100 per seed file: ~5 s) runs longer; `FRAMEKIT_FUZZ_SEED`
/// replays one run. The failing mutant is kept and named in the failure.
@Suite("Input fuzzing: mutated files through every reader")
struct InputFuzzTests {
    static let iterations = ProcessInfo.processInfo.environment["FRAMEKIT_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 100

    /// The seed files: small, one per reader.
    static func seeds(in folder: URL) throws -> [URL] {
        let jpeg = try JPEG.encode(try PixelBuffer(contentsOf: Fixtures.astronaut), quality: 60)
        let y4m = folder.appendingPathComponent("seed.y4m")
        try Y4MWriter.write(frames: 6, width: 32, height: 32, to: y4m)
        let mjpeg = folder.appendingPathComponent("seed.mjpeg")
        try Data(jpeg + jpeg + jpeg).write(to: mjpeg)
        let image = folder.appendingPathComponent("seed.jpg")
        try Data(jpeg).write(to: image)
        let mkv = folder.appendingPathComponent("seed.mkv")
        try MatroskaWriter.write(mkv, jpeg: Data(jpeg), times: [0, 33, 66, 100, 133], width: 512, height: 512)
        var seeds = [y4m, mjpeg, image, mkv]
        if FFmpegTool.isInstalled {
            let mp4 = folder.appendingPathComponent("seed.mp4")
            try FFmpegTool.clip(mp4, frames: 8, codec: ["-c:v", "libx264", "-g", "4"])
            let png = folder.appendingPathComponent("seed.png")
            _ = try FFmpegTool.run(["-f", "lavfi", "-i", "testsrc2=size=64x48", "-frames:v", "1", png.path])
            seeds += [mp4, png]
        }
        return seeds
    }

    /// One mutation: flipped bytes, a cut, inserted junk, a repeated stretch, or a 1/2/4/8-byte
    /// field overwritten with an extreme value (sizes, lengths and timestamps live in such fields).
    static func mutate(_ bytes: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var out = bytes
        guard !out.isEmpty else { return out }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let at = Int.random(in: 0..<max(1, out.count), using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:
                for _ in 0..<Int.random(in: 1...16, using: &random) {
                    out[Int.random(in: 0..<out.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                }
            case 1: out.removeSubrange(min(at, out.count)...)
            case 2:
                out.insert(
                    contentsOf: (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }, at: at)
            case 3:
                let length = min(out.count - at, Int.random(in: 1...4096, using: &random))
                out.insert(contentsOf: out[at..<(at + length)], at: at)
            default:
                let width = [1, 2, 4, 8].randomElement(using: &random)!
                let extreme: [UInt8] = [0x00, 0xFF, 0x7F, 0x80].randomElement(using: &random).map { Array(repeating: $0, count: width) }!
                for (k, byte) in extreme.enumerated() where at + k < out.count { out[at + k] = byte }
            }
            if out.isEmpty { return out }
        }
        return out
    }

    /// Captures `device` until its source ends or fails (at most 30 s): whether it did, and the
    /// output's counts after the stop. Nil when the session would not start (a typed error).
    static func captureToEnd(_ device: CaptureDevice, discardsLate: Bool) -> (ended: Bool, counts: OutputCounts)? {
        let recorder = Recorder()
        let session = CaptureSession()
        let output = VideoDataOutput()
        output.alwaysDiscardsLateVideoFrames = discardsLate
        output.setSampleBufferDelegate(recorder)
        let log = NotificationLog(session)
        do {
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: device))
                try session.addOutput(output)
            }
            try session.startRunning()
        } catch {
            return nil
        }
        let ended = log.wait(timeout: 30) {
            switch $0 {
            case .sourceEnded, .runtimeError: true
            default: false
            }
        }
        session.stopRunning()
        return (ended != nil, output.counts)
    }

    @Test("seeded mutants of Y4M, MJPEG, JPEG, Matroska, MP4 and PNG: typed errors or frames, every one accounted, none traps or hangs")
    func mutants() throws {
        let folder = Fixtures.temporaryFolder("fuzz")
        var random = SeededGenerator.fuzzing(default: 0xF022)
        var opened = 0
        var refused = 0
        for seed in try Self.seeds(in: folder) {
            let original = [UInt8](try Data(contentsOf: seed))
            for i in 0..<Self.iterations {
                let mutant = folder.appendingPathComponent("mutant-\(i).\(seed.pathExtension)")
                try Data(Self.mutate(original, using: &random)).write(to: mutant)
                let device: CaptureDevice
                do { device = try CaptureDevice.file(mutant) } catch {
                    refused += 1 // a typed error (CaptureError): what bad input should get
                    continue
                }
                opened += 1
                guard let (ended, counts) = Self.captureToEnd(device, discardsLate: false) else {
                    refused += 1
                    continue
                }
                let kept = folder.appendingPathComponent("failing-\(i)-\(seed.lastPathComponent)")
                if !ended || !counts.isBalanced || counts.pending != 0 {
                    try? FileManager.default.copyItem(at: mutant, to: kept)
                }
                #expect(ended, "\(kept.path): neither ended nor failed within 30 s")
                #expect(counts.isBalanced && counts.pending == 0, "\(kept.path): \(counts)")
            }
        }
        // Not vacuous: the mutants reach the readers' insides, not only their header checks.
        #expect(opened >= Self.iterations * 2 && refused >= 1, "opened \(opened), refused \(refused)")
    }

    @Test(
        "seeded mutants of an MJPEG and an MPEG-TS H.264 stream served live over tcp://: typed errors or frames, every one accounted, none traps or hangs"
    )
    func streamMutants() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = Fixtures.temporaryFolder("fuzz-stream")
        var random = SeededGenerator.fuzzing(default: 0x57E4)
        let jpeg = try JPEG.encode(try PixelBuffer(contentsOf: Fixtures.astronaut), quality: 60)
        let ts = folder.appendingPathComponent("seed.ts")
        try FFmpegTool.clip(ts, frames: 8, codec: ["-c:v", "libx264", "-g", "4", "-f", "mpegts"])
        let seeds = [jpeg + jpeg + jpeg, [UInt8](try Data(contentsOf: ts))]
        let mutants = try Self.streamMutants(of: seeds.map { ([], $0) }, in: folder, using: &random)
        let perSeed = mutants.count / seeds.count
        // One server for them all: the next mutant to the next connection.
        let port = FreePort.next()
        let server = try FFmpegTool.serveFiles(mutants, port: port)
        defer { server.terminate() }
        let (opened, frames) = try Self.captureEach(mutants, from: try #require(URL(string: "tcp://127.0.0.1:\(port)")), server: server)
        // Not vacuous: mutants reach the stream readers past their probes.
        #expect(opened >= perSeed / 2, "opened \(opened) of \(mutants.count)")
        print("stream fuzzing: \(mutants.count) mutants served, \(opened) opened as streams, \(frames) frames delivered")
    }

    @Test(
        "seeded mutants of an IP camera's multipart MJPEG and of raw H.264, each served over http:// with no length (live): typed errors or frames, every one accounted, none traps or hangs"
    )
    func httpStreamMutants() throws {
        try #require(FFmpegTool.isInstalled, "scripts/bootstrap --tests installs ffmpeg")
        let folder = Fixtures.temporaryFolder("fuzz-http")
        var random = SeededGenerator.fuzzing(default: 0x4774)
        let jpeg = try JPEG.encode(try PixelBuffer(contentsOf: Fixtures.astronaut), quality: 60)
        // multipart/x-mixed-replace, as IP cameras send MJPEG: a part per frame, each with its length.
        let parts = (0..<3).flatMap { _ in
            Array("--frame\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n".utf8) + jpeg + Array("\r\n".utf8)
        }
        let h264 = folder.appendingPathComponent("seed.h264")
        try FFmpegTool.clip(h264, frames: 8, codec: ["-c:v", "libx264", "-g", "4", "-f", "h264"])
        let seeds: [(type: String, body: [UInt8])] = [
            ("multipart/x-mixed-replace; boundary=frame", parts), ("video/h264", [UInt8](try Data(contentsOf: h264)))
        ]
        // The response's head stays whole (FFmpeg's http client is not the target here; the
        // demuxers and decoders behind it are): the body is mutated.
        let mutants = try Self.streamMutants(
            of: seeds.map { (Array("HTTP/1.0 200 OK\r\nContent-Type: \($0.type)\r\n\r\n".utf8), $0.body) }, in: folder, using: &random)
        let perSeed = mutants.count / seeds.count
        let port = FreePort.next()
        let server = try FFmpegTool.serveFiles(mutants, readingRequests: true, port: port)
        defer { server.terminate() }
        let (opened, frames) = try Self.captureEach(
            mutants, from: try #require(URL(string: "http://127.0.0.1:\(port)/stream")), server: server)
        #expect(opened >= perSeed / 2, "opened \(opened) of \(mutants.count)")
        print("http stream fuzzing: \(mutants.count) mutants served, \(opened) opened as streams, \(frames) frames delivered")
    }

    /// Mutants of each seed's body, each after its head, written to `folder`: a quarter of the
    /// files' count a seed (each mutant is a connection, a probe and a capture).
    static func streamMutants(of seeds: [(head: [UInt8], body: [UInt8])], in folder: URL, using random: inout SeededGenerator) throws
        -> [URL]
    {
        let perSeed = max(4, iterations / 4)
        var mutants: [URL] = []
        for (s, seed) in seeds.enumerated() {
            for i in 0..<perSeed {
                let mutant = folder.appendingPathComponent("mutant-\(s)-\(i).bin")
                try Data(seed.head + mutate(seed.body, using: &random)).write(to: mutant)
                mutants.append(mutant)
            }
        }
        return mutants
    }

    /// Opens `url` once for each of `mutants` (the server gives the next one to each connection)
    /// and captures what opens to its end: every frame accounted, each run ended. Returns how
    /// many opened as streams and the frames delivered.
    static func captureEach(_ mutants: [URL], from url: URL, server: Process) throws -> (opened: Int, frames: Int) {
        var opened = 0
        var frames = 0
        for mutant in mutants where server.isRunning {
            let device: CaptureDevice
            do { device = try CaptureDevice.stream(url, reconnect: .init(attempts: 0)) } catch {
                continue // a typed error (the probe found no video): what bad input should get
            }
            opened += 1
            // The server half-closes after the bytes: the stream ends, and with no reconnection
            // the session stops with an error (or the source's own end).
            guard let (ended, counts) = captureToEnd(device, discardsLate: true) else { continue }
            frames += counts.delivered
            #expect(ended, "\(mutant.path): neither ended nor failed within 30 s")
            #expect(counts.isBalanced && counts.pending == 0, "\(mutant.path): \(counts)")
        }
        return (opened, frames)
    }
}
