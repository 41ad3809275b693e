import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// The CLI's outputs and secrets under faults: outputs that cannot be created or that are the
/// run's input, passwords in addresses, partial files, a preview out of file descriptors.
/// Through the real binary.
@Suite("framekit's outputs and secrets under faults")
struct OutputFaultTests: FaultSuite {
    @Test("outputs that cannot be created fail before capture (exit 73); photos must be .jpg")
    func unwritableOutputs() throws {
        let start = Date()
        let missing = try BinaryRunner.run("framekit", Self.quick + ["--frames", "100", "--stats", "/nonexistent/folder/s.json"])
        #expect(missing.status == 73 && missing.stderr.contains("/nonexistent/folder"), "\(missing.status) \(missing.stderr)")
        #expect(missing.stdout.isEmpty, "nothing was captured")
        #expect(Date().timeIntervalSince(start) < 20)
        // An empty name, or one too long for its temporary name beside it, failed only after
        // the whole run.
        let long = Fixtures.temporaryFolder().appendingPathComponent(String(repeating: "s", count: 240) + ".json").path
        for bad in ["", long] {
            let run = try BinaryRunner.run("framekit", Self.quick + ["--frames", "100", "--stats", bad])
            #expect(run.status == 73 && run.stdout.isEmpty, "'\(bad.suffix(20))': \(run.status) \(run.stderr)")
        }
        let png = try BinaryRunner.run("framekit", ["photo", "--device", "virtual", "--output", "x.png"])
        #expect(png.status == 64 && png.stderr.contains(".jpg"), "\(png.stderr)")
    }

    @Test("an output that is the run's input (the same file by another path) is refused before capture (73), the input untouched")
    func outputOntoInput() throws {
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("victim.mjpeg")
        try Data(try JPEG.Encoder().encode(try PixelBuffer(contentsOf: Fixtures.coffee), quality: 80)).write(to: clip)
        let before = try Data(contentsOf: clip)
        let sub = folder.appendingPathComponent("sub")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        for target in [clip.path, sub.path + "/../victim.mjpeg"] {
            for option in ["--stats", "--report"] {
                let run = try BinaryRunner.run("framekit", ["detect", "--input", clip.path, option, target])
                #expect(run.status == 73 && run.stderr.contains("input"), "\(option) \(target): \(run.status) \(run.stderr)")
                #expect(run.stdout.isEmpty, "nothing was processed")
            }
        }
        #expect(try Data(contentsOf: clip) == before)
        // merge: a batch folder's own stats file is an input too.
        let batch = folder.appendingPathComponent("batch")
        try FileManager.default.createDirectory(at: batch, withIntermediateDirectories: true)
        let stats = batch.appendingPathComponent("a.mjpeg.stats.json")
        try Data("{}".utf8).write(to: stats)
        let merge = try BinaryRunner.run("framekit", ["merge", batch.path, "--output", stats.path])
        let kept = try String(contentsOf: stats, encoding: .utf8)
        #expect(merge.status == 73 && kept == "{}", "\(merge.status) \(merge.stderr)")
        // Every stats file refused (this one is "{}") is said as such, naming it, not as an empty
        // folder (#52); nothing merged is no document: no summary of zero inputs on stdout, no
        // --output or --report written.
        let merged = folder.appendingPathComponent("merged.json")
        let report = folder.appendingPathComponent("merged.html")
        let refused = try BinaryRunner.run("framekit", ["merge", batch.path, "--output", merged.path, "--report", report.path])
        #expect(
            refused.status == 65 && refused.stderr.contains("none of the 1 stats file(s)") && refused.stderr.contains("a.mjpeg.stats.json")
                && !refused.stderr.contains("holds no"), "\(refused.status) \(refused.stderr)")
        #expect(refused.stdout.isEmpty, "\(refused.stdout)")
        #expect(!FileManager.default.fileExists(atPath: merged.path) && !FileManager.default.fileExists(atPath: report.path))
        let none = try BinaryRunner.run("framekit", ["merge", Fixtures.temporaryFolder().path])
        #expect(none.status == 65 && none.stderr.contains("holds no batch results") && none.stdout.isEmpty, "\(none.stdout) \(none.stderr)")
    }

    @Test("a stream's password never reaches stderr or a batch's lines: admin:s3cret@ is shown as admin:***@")
    func passwordsRedacted() throws {
        let port = FreePort.next() // nothing listens there: the stream is refused
        let url = "tcp://admin:s3cret@127.0.0.1:\(port)/cam"
        let run = try BinaryRunner.run("framekit", ["detect", "--input", url, "--frames", "5"])
        #expect(run.status == 75, "\(run.status) \(run.stderr)")
        #expect(!run.stderr.contains("s3cret") && !run.stdout.contains("s3cret") && run.stderr.contains("admin:***@"), "\(run.stderr)")
        let folder = Fixtures.temporaryFolder()
        let list = folder.appendingPathComponent("list.txt")
        try Data((url + "\n").utf8).write(to: list)
        let out = folder.appendingPathComponent("out")
        let batch = try BinaryRunner.run("framekit", ["detect", "--inputs", list.path, "--output-dir", out.path, "--frames", "5"])
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path)
        let written = try files.map { try String(contentsOf: out.appendingPathComponent($0), encoding: .utf8) }.joined()
        #expect(batch.status == 75, "\(batch.status) \(batch.stderr)")
        for text in [batch.stdout, batch.stderr, written, files.joined(separator: " ")] { #expect(!text.contains("s3cret"), "\(text)") }
    }

    @Test("a URL's password and secret query values are printed nowhere: not in errors, frame lines, --stats or --report")
    func secretsInAddresses() throws {
        try #require(FFmpegTool.isInstalled)
        let folder = Fixtures.temporaryFolder()
        try FFmpegTool.clip(folder.appendingPathComponent("clip.mjpeg"), frames: 5, codec: ["-c:v", "mjpeg", "-f", "mjpeg"])
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) }).write(
            to: folder.appendingPathComponent("junk.ts"))
        let port = FreePort.next()
        let server = try FFmpegTool.serveHTTP(folder: folder, port: port)
        defer { server.terminate() }
        let secrets = ["hunter2", "TOKEN-5150", "pw-9731"]
        func address(_ file: String) -> String {
            "http://admin:hunter2@127.0.0.1:\(port)/\(file)?token=TOKEN-5150&pass=pw-9731&channel=2"
        }
        // A response with a length is read as a file: one that broke off quoted the raw address
        // in its error (#52).
        let brokenPort = FreePort.next()
        let broken = try FFmpegTool.serveBrokenOffHTTP(folder.appendingPathComponent("clip.mjpeg"), port: brokenPort)
        defer { broken.terminate() }
        let brokenOff = "http://admin:hunter2@127.0.0.1:\(brokenPort)/x.mjpeg?token=TOKEN-5150&pass=pw-9731&channel=2"
        for input in [brokenOff, address("junk.ts"), address("missing.mjpeg")] {
            let run = try BinaryRunner.run("framekit", ["detect", "--detector", "haar", "--input", input, "--reconnect", "0"], timeout: 60)
            #expect(run.status != 0 && run.stderr.contains("admin:***@") && run.stderr.contains("channel=2"), "\(input): \(run.stderr)")
            #expect(!secrets.contains { run.stderr.contains($0) || run.stdout.contains($0) }, "\(input): \(run.stderr)")
        }
        let stats = folder.appendingPathComponent("stats.json")
        let report = folder.appendingPathComponent("report.html")
        let run = try BinaryRunner.run(
            "framekit", ["detect", "--detector", "haar", "--input", address("clip.mjpeg"), "--stats", stats.path, "--report", report.path],
            timeout: 60)
        #expect(run.status == 0 && run.lines.count == 6, "\(run.status) \(run.stderr)")
        let written = try [String(contentsOf: stats, encoding: .utf8), String(contentsOf: report, encoding: .utf8)]
        #expect(written.allSatisfy { $0.contains("channel=2") })
        for text in written + [run.stdout, run.stderr] {
            #expect(!secrets.contains { text.contains($0) }, "\(text.prefix(300))")
        }
    }

    @Test("--annotate leaves no partial file behind and never replaces an existing one")
    func annotateIsAtomic() throws {
        let folder = Fixtures.temporaryFolder()
        let clip = folder.appendingPathComponent("a.mjpeg")
        try Data("keep me".utf8).write(to: clip)
        let run = try BinaryRunner.run("framekit", Self.quick + ["--frames", "3", "--annotate", clip.path])
        #expect(run.status == 73)
        #expect(try String(contentsOf: clip, encoding: .utf8) == "keep me")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["a.mjpeg"])
        // No frame at all (an input with none; a signal before the first): no file, not 0 bytes.
        let header = folder.appendingPathComponent("header-only.y4m")
        try Data("YUV4MPEG2 W64 H48 F30:1 Ip A1:1 C420jpeg\n".utf8).write(to: header)
        let empty = folder.appendingPathComponent("none.mjpeg")
        let none = try BinaryRunner.run("framekit", ["detect", "--input", header.path, "--annotate", empty.path])
        #expect(none.status == 65 && none.stderr.contains("not written"), "\(none.status) \(none.stderr)")
        #expect(!FileManager.default.fileExists(atPath: empty.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["a.mjpeg", "header-only.y4m"])
    }

    @Test("out of file descriptors, the preview backs off instead of spinning, and serves again once they are back")
    func previewOutOfDescriptors() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = [
            "--nofile=40", Self.framekit, "preview", "--device", "virtual", "--port", "0", "--max-clients", "256",
            "--duration", "20"
        ]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let first = out.fileHandleForReading.availableLine(timeout: 15)
        let object = try JSONSerialization.jsonObject(with: Data(try #require(first).utf8)) as? [String: Any]
        let port = try #require(object?["port"] as? Int)
        // Hold more connections than the process has descriptors left.
        var held: [RawHTTP] = []
        for _ in 0..<48 { if let c = try? RawHTTP(port: port) { held.append(c) } }
        // The accept thread's own CPU (the face tracker's passes keep the process busy anyway);
        // on a loaded machine the thread may take a moment to name itself.
        var before = Self.cpuSeconds(process.processIdentifier, thread: "fk-preview-acc")
        for _ in 0..<50 where before < 0 {
            Thread.sleep(forTimeInterval: 0.1)
            before = Self.cpuSeconds(process.processIdentifier, thread: "fk-preview-acc")
        }
        Thread.sleep(forTimeInterval: 2)
        let used = Self.cpuSeconds(process.processIdentifier, thread: "fk-preview-acc") - before
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []).compactMap {
            try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\($0)/comm", encoding: .utf8)
        }
        #expect(before >= 0 && used < 0.3, "\(used) s of CPU in 2 s: the accept loop spins (threads: \(names))")
        held.removeAll()
        // Served again once the held connections are gone (the accept loop backs off while out of
        // descriptors): retried until a deadline rather than asked once after 1.5 s.
        #expect(eventually { (try? RawHTTP.request(port: port, "GET", "/stats.json").status) == 200 }, "not served again")
    }

    /// User + system CPU seconds of the thread of a process with that name, from /proc (-1 if
    /// there is none).
    static func cpuSeconds(_ pid: Int32, thread name: String) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        guard
            let tid = tasks.first(where: {
                (try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8))?.hasPrefix(name) == true
            }), let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return -1 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

extension FileHandle {
    /// The first line written to this pipe within `timeout` seconds.
    func availableLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var data = Data()
        while Date() < deadline {
            var p = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let chunk = availableData
            if chunk.isEmpty { return nil }
            data.append(chunk)
            if let newline = data.firstIndex(of: 10) { return String(decoding: data[..<newline], as: UTF8.self) }
        }
        return nil
    }
}
