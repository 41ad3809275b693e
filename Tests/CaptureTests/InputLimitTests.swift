import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("Inputs that would cost or block: forged sizes, FIFOs, devices")
struct InputLimitTests {
    /// A real JPEG whose frame header (SOF0) now claims `width` x `height`.
    static func forgedJPEG(width: Int, height: Int) throws -> [UInt8] {
        var bytes = try JPEG.encode(try PixelBuffer(width: 16, height: 16, format: .rgb24), quality: 80)
        let sof = try #require((0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        bytes[sof + 5] = UInt8(height >> 8)
        bytes[sof + 6] = UInt8(height & 0xFF)
        bytes[sof + 7] = UInt8(width >> 8)
        bytes[sof + 8] = UInt8(width & 0xFF)
        return bytes
    }

    @Test("a JPEG header claiming 16384x16384 is refused before any allocation, in microseconds")
    func forgedJPEGHeader() throws {
        let bytes = try Self.forgedJPEG(width: 16384, height: 16384)
        #expect(bytes.count < 1000)
        let start = Date()
        #expect {
            _ = try JPEG.decode(bytes)
        } throws: { error in
            guard case ImageIOError.pixelBuffer(.exceedsPixelBudget(16384, 16384, _))? = error as? ImageIOError else { return false }
            return true
        }
        #expect(Date().timeIntervalSince(start) < 0.05)
        // As a file source: the device cannot be made (its pool would be 16384x16384).
        let file = Fixtures.temporaryFolder().appendingPathComponent("forged.mjpeg")
        try Data(bytes).write(to: file)
        #expect(throws: (any Error).self) {
            let session = CaptureSession()
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: try CaptureDevice.file(file)))
                try session.addOutput(VideoDataOutput())
            }
            try session.startRunning()
        }
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test("the pixel budget is a setting: 8K by default, raised or lowered for the process")
    func budget() throws {
        #expect(PixelBuffer.pixelBudget == 7680 * 4320)
        #expect(throws: PixelBufferError.self) { try PixelBuffer(width: 7682, height: 4320, format: .gray8) }
        _ = try PixelBuffer(width: 7680, height: 4320, format: .gray8)
    }

    @Test("a 2 GB file that begins like a JPEG or a PGM — a folder's first image, one PGM — is refused unread, at once, naming the file")
    func hugeImageFiles() throws {
        let folder = Fixtures.temporaryFolder("huge-images")
        // Sparse files: 2 GB on paper, a few bytes on disk; read whole they cost 2 GB of memory.
        func sparse(_ name: String, head: [UInt8]) throws -> URL {
            let url = folder.appendingPathComponent(name)
            try Data(head).write(to: url)
            #expect(truncate(url.path, 2 << 30) == 0)
            return url
        }
        let images = folder.appendingPathComponent("images")
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        let jpeg = try InputLimitTests.forgedJPEG(width: 640, height: 480)
        _ = try sparse("images/a.jpg", head: jpeg)
        let pgm = try sparse("one.pgm", head: Array("P5\n640 480\n255\n".utf8))
        for url in [images, pgm] {
            let start = Date()
            do {
                _ = try CaptureDevice.file(url)
                Issue.record("\(url.lastPathComponent) was accepted")
            } catch {
                #expect("\(error)".contains("larger than any JPEG or PNM"), "\(error)")
            }
            #expect(Date().timeIntervalSince(start) < 1, "\(url.lastPathComponent) took \(Date().timeIntervalSince(start)) s")
        }
        #expect(throws: ImageIOError.self) { _ = try PixelBuffer(contentsOf: pgm) }
    }

    @Test("a FIFO or a character device given as a file is refused at once with the reason")
    func fifoAndDevice() throws {
        let fifo = Fixtures.temporaryFolder().appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let start = Date()
        do {
            _ = try CaptureDevice.file(URL(fileURLWithPath: fifo))
            Issue.record("a FIFO was accepted")
        } catch {
            #expect("\(error)".contains("FIFO"), "\(error)")
        }
        do {
            _ = try CaptureDevice.file(URL(fileURLWithPath: "/dev/null"))
            Issue.record("a device was accepted")
        } catch {
            #expect("\(error)".contains("character device"), "\(error)")
        }
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test(
        "a file cut short while it is being read: the frames past the cut are corrupt or missing, never SIGBUS",
        arguments: ["y4m", "mjpeg"])
    func truncatedWhileReading(kind: String) throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.\(kind)")
        if kind == "y4m" {
            try Y4MWriter.write(frames: 40, width: 320, height: 240, to: file)
        } else {
            let jpeg = try JPEG.encode(try PixelBuffer(contentsOf: Fixtures.astronaut), quality: 80)
            try Data((0..<40).flatMap { _ in jpeg }).write(to: file)
        }
        let recorder = Recorder(delay: 0.02)
        let (session, output) = try makeSession(try CaptureDevice.file(file), preset: .high, recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(recorder.wait(timeout: 10) { $0.frames.count >= 2 })
        // Cut the file to a third while the source is in the middle of it (it was mapped before:
        // the next read of a vanished page was SIGBUS).
        let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as! Int
        #expect(truncate(file.path, off_t(size / 3)) == 0)
        #expect(log.wait(timeout: 20) { if case .sourceEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
        let counts = output.counts
        #expect(counts.delivered < 40 && counts.delivered >= 2, "\(counts)")
        #expect(counts.captured == counts.delivered + counts.droppedTotal)
    }
}

@Suite("Invalid values are thrown errors, never traps")
struct NoTrapTests {
    @Test("geometry with absurd factors saturates instead of trapping (NaN, ±∞, 1e300)")
    func geometrySaturates() {
        let box = Rect(x: 10, y: 20, width: 30, height: 40)
        for factor in [Double.nan, .infinity, -.infinity, 1e300, -1e300] {
            let scaled = box.scaled(by: factor)
            #expect([0, Int.max, Int.min].contains(scaled.width), "\(factor): \(scaled)")
        }
        #expect(box.scaled(by: 2) == Rect(x: 20, y: 40, width: 60, height: 80))
    }

    @Test("photo quality, movie quality, frame duration and resize size out of range throw")
    func invalidValues() throws {
        #expect(throws: CaptureError.self) { try PhotoSettings(quality: 0) }
        #expect(throws: CaptureError.self) { try PhotoSettings(quality: 101) }
        #expect(try PhotoSettings(quality: 100).quality == 100 && PhotoSettings().quality == 92)
        let movie = MovieFileOutput()
        #expect(throws: CaptureError.self) { try movie.setQuality(101) }
        #expect(throws: CaptureError.self) { try movie.setQuality(0) }
        try movie.setQuality(70)
        #expect(movie.quality == 70)
        let camera = CaptureDevice.virtualCamera
        for bad in [0.0, -1, .infinity, .nan] {
            #expect(throws: CaptureError.self) { try camera.setActiveVideoMinFrameDuration(bad) }
        }
        try camera.setActiveVideoMinFrameDuration(nil)
        #expect(throws: PixelBufferError.self) { try ResizeStage(width: 0, height: 10) }
        #expect(throws: PixelBufferError.self) { try ResizeStage(width: 10, height: -1) }
    }
}
