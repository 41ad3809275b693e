import Foundation
import FrameKit
import FrameTestSupport
import Testing

@Suite("File sources through a session")
struct FileSourceTests {
    /// Runs `device` to its end and returns the recorder and counts.
    func runToEnd(_ device: CaptureDevice, format: PixelFormat? = nil, delay: Double = 0) throws -> (Recorder, OutputCounts) {
        let recorder = Recorder(delay: delay, keepPixels: true)
        let (session, output) = try makeSession(device, preset: .high, recorder: recorder, format: format)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(log.wait(timeout: 20) { if case .sourceEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
        return (recorder, output.counts)
    }

    @Test("Y4M 4:2:0 delivers every frame as I420 with the file's pixels", arguments: ["420jpeg", "420"])
    func y4m420(chroma: String) throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 12, width: 64, height: 48, chroma: chroma, to: file)
        let device = try CaptureDevice.file(file)
        #expect(device.formats[0].size == FrameSize(width: 64, height: 48) && device.formats[0].frameRates == [30])
        let (recorder, counts) = try runToEnd(device, delay: 0.01) // a slow consumer loses nothing from a file
        #expect(counts.captured == 12 && counts.delivered == 12 && counts.droppedTotal == 0)
        let frames = recorder.frames
        try #require(frames.count == 12)
        #expect(frames.map(\.sequenceNumber) == Array(0..<12))
        let f5 = frames[5].pixelBuffer
        #expect(f5.format == .i420)
        #expect(f5.withUnsafeBytes(ofPlane: 0) { b, p in b[3 * p.bytesPerRow + 10] } == Y4MWriter.luma(frame: 5, x: 10, y: 3))
        #expect(f5.withUnsafeBytes(ofPlane: 1) { b, _ in b[0] } == Y4MWriter.cb(frame: 5))
        #expect(abs(frames[6].presentationTime - 6.0 / 30) < 1e-9)
    }

    @Test("Y4M 4:2:2 arrives as YUYV; mono as GRAY8")
    func y4m422AndMono() throws {
        let folder = Fixtures.temporaryFolder()
        let file422 = folder.appendingPathComponent("422.y4m")
        try Y4MWriter.write(frames: 3, width: 32, height: 16, chroma: "422", rate: "25:1", to: file422)
        let (r422, c422) = try runToEnd(try CaptureDevice.file(file422))
        try #require(c422.delivered == 3 && r422.frames.count == 3)
        let yuyv = r422.frames[2].pixelBuffer
        #expect(yuyv.format == .yuyv)
        let pair = yuyv.withUnsafeBytes(ofPlane: 0) { b, p in Array(b[p.bytesPerRow * 1 + 4..<p.bytesPerRow * 1 + 8]) }
        #expect(
            pair == [
                Y4MWriter.luma(frame: 2, x: 2, y: 1), Y4MWriter.cb(frame: 2), Y4MWriter.luma(frame: 2, x: 3, y: 1), Y4MWriter.cr(frame: 2)
            ])
        let mono = folder.appendingPathComponent("mono.y4m")
        try Y4MWriter.write(frames: 2, width: 16, height: 16, chroma: "mono", to: mono)
        let (rMono, _) = try runToEnd(try CaptureDevice.file(mono), format: .bgra32)
        try #require(rMono.frames.count == 2)
        #expect(rMono.frames[0].pixelBuffer.format == .bgra32)
    }

    @Test("a truncated last Y4M frame is a corrupt drop; the rest is delivered")
    func y4mTruncated() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("cut.y4m")
        try Y4MWriter.write(frames: 4, width: 32, height: 32, truncateLastBy: 100, to: file)
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(file))
        #expect(counts.delivered == 3 && counts.dropped(.corrupt) == 1)
        #expect(recorder.drops.map(\.sequenceNumber) == [3])
    }

    @Test("a damaged Y4M FRAME header: that frame is a corrupt drop, the stream resumes at the next; a stretch with none is all dropped")
    func y4mDamagedFrameHeader() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("damaged.y4m")
        try Y4MWriter.write(frames: 60, width: 32, height: 32, to: file)
        var bytes = [UInt8](try Data(contentsOf: file))
        let frameHeaders = (0..<(bytes.count - 5)).filter { bytes[$0..<($0 + 5)].elementsEqual("FRAME".utf8) }
        try #require(frameHeaders.count == 60)
        bytes[frameHeaders[10]] = UInt8(ascii: "X") // "XRAME": frame 10's header is damaged
        // Frames 30…32 zeroed, headers included, but for the last 700 bytes: three frames lost.
        bytes.replaceSubrange(
            frameHeaders[30]..<(frameHeaders[33] - 700), with: repeatElement(0, count: frameHeaders[33] - 700 - frameHeaders[30]))
        try Data(bytes).write(to: file)
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(file))
        #expect(counts.captured == 60 && counts.delivered == 56 && counts.dropped(.corrupt) == 4, "\(counts)")
        #expect(recorder.drops.map(\.sequenceNumber) == [10, 30, 31, 32])
        // Frame 11 is frame 11's pixels: the numbering did not slip.
        let f11 = try #require(recorder.frames.first { $0.sequenceNumber == 11 }).pixelBuffer
        #expect(f11.withUnsafeBytes(ofPlane: 0) { b, p in b[3 * p.bytesPerRow + 10] } == Y4MWriter.luma(frame: 11, x: 10, y: 3))

        // Headers gone from frame 50 on: the ten frames the rest could hold are reported lost.
        let tail = Array(bytes.prefix(frameHeaders[50])) + [UInt8](repeating: 0x41, count: 10 * 1542)
        try Data(tail).write(to: file)
        let (_, tailCounts) = try runToEnd(try CaptureDevice.file(file))
        #expect(tailCounts.captured == 60 && tailCounts.delivered == 46 && tailCounts.dropped(.corrupt) == 14, "\(tailCounts)")
    }

    @Test(
        "an unreadable header is a thrown error naming the file",
        arguments: [
            "YUV4MPEG2 W0 H0 F30:1\n", "YUV4MPEG2 W64 H48\n", "YUV4MPEG2 W64 H48 F30:1 C444\n", "YUV4MPEG2 W63 H48 F30:1\n", "GIF89a...."
        ])
    func badHeader(header: String) throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("bad.y4m")
        try Data(header.utf8).write(to: file)
        let error = thrownCaptureError { _ = try CaptureDevice.file(file) }
        guard case .unreadableFile(let path, _)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(path == file.path)
        let missing = thrownCaptureError { _ = try CaptureDevice.file(URL(fileURLWithPath: "/nonexistent/clip.y4m")) }
        #expect(missing?.description.contains("/nonexistent/clip.y4m") == true)
    }

    @Test("MJPEG: corrupt and truncated JPEG frames are counted and skipped")
    func mjpeg() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let good = try JPEG.encode(photo, quality: 80)
        var scrambled = good
        for i in stride(from: 1000, to: good.count - 100, by: 5) { scrambled[i] ^= 0xA5 }
        let truncated = Array(good.prefix(good.count / 2)) + [0xFF, 0xD9]
        let stream = good + good + scrambled + good + truncated + good
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.mjpeg")
        try Data(stream).write(to: file)
        let device = try CaptureDevice.file(file)
        #expect(device.formats[0].isCompressed && device.formats[0].size == FrameSize(width: 512, height: 512))
        let (recorder, counts) = try runToEnd(device)
        try #require(counts.captured == 6 && counts.delivered == 4 && counts.dropped(.corrupt) == 2)
        #expect(Set(recorder.drops.map(\.sequenceNumber)) == [2, 4])
        #expect(recorder.frames[0].pixelBuffer.format == .nv12FullRange)
        #expect(try HaarFaceDetector().detect(in: recorder.frames[3].pixelBuffer).count == 1)
    }

    @Test("MJPEG: bytes between frames are skipped, a frame cut short is one corrupt drop, a thumbnail is no frame")
    func mjpegStructure() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        let good = try JPEG.encode(photo, quality: 80)
        // An EXIF-style APP1 holding a whole JPEG (a thumbnail, with its own SOI and EOI).
        let thumbnail = try JPEG.encode(try PixelBuffer(width: 16, height: 16, format: .gray8), quality: 50)
        let payload = Array("Exif\0\0".utf8) + thumbnail
        let app1: [UInt8] = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        let withThumbnail = Array(good[0..<2]) + app1 + Array(good[2...])
        let cut = Array(good.prefix(good.count / 2)) // no EOI: the next frame's SOI follows at once
        let forged = try InputLimitTests.forgedJPEG(width: 8192, height: 4096) // over the pixel budget
        let parts: [[UInt8]] = [
            forged, Array("\r\n--frame\r\n".utf8), good, [0x0A], good, [0, 0, 0, 0], withThumbnail, cut, good, [0xFF, 0xFF, 0x00],
            withThumbnail
        ]
        let stream = parts.flatMap { $0 }
        // Found the same whatever the chunking (an SOI or a length across two reads).
        func split(_ chunk: Int) -> [Range<Int>] {
            var splitter = JPEG.StreamSplitter()
            var offset = 0
            stream.withUnsafeBytes { all in
                while offset < all.count {
                    let n = min(chunk, all.count - offset)
                    splitter.consume(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + n)]), at: offset)
                    offset += n
                }
            }
            splitter.finish(at: stream.count)
            return splitter.frames
        }
        let frames = split(1 << 20)
        #expect(frames.count == 7, "\(frames)")
        #expect(split(1) == frames && split(3) == frames && split(4096) == frames)
        #expect(frames.map { Array(stream[$0]) } == [forged, good, good, withThumbnail, cut, good, withThumbnail])

        let file = Fixtures.temporaryFolder().appendingPathComponent("junk.mjpeg")
        try Data(stream).write(to: file)
        // The size comes from the first frame within the budget; the forged one is a drop.
        let device = try CaptureDevice.file(file)
        #expect(device.formats[0].size == FrameSize(width: 512, height: 512))
        let (recorder, counts) = try runToEnd(device)
        #expect(counts.captured == 7 && counts.delivered == 5 && counts.dropped(.corrupt) == 2, "\(counts)")
        #expect(Set(recorder.drops.map(\.sequenceNumber)) == [0, 4])
    }

    @Test(
        "an MJPEG whose frames' middles are scrambled (FF D8 pairs among the noise) and whose last is cut: one frame each, none made up (#52: 90 counted 118)"
    )
    func scrambledMiddles() throws {
        let jpeg = try [UInt8](Data(contentsOf: Fixtures.astronaut))
        var random = SystemRandomNumberGenerator()
        var stream: [UInt8] = []
        let count = 30
        for k in 0..<count {
            var frame = jpeg
            if k % 6 == 2 {
                // Noise over the middle of the entropy-coded data: an end marker (FF D9) first,
                // so the rest of the frame is bytes between frames, holding FF D8 pairs (but
                // never FF D8 FF, which is an SOI).
                let start = frame.count / 3
                let end = 2 * frame.count / 3
                for i in start..<end { frame[i] = UInt8.random(in: 0...255, using: &random) }
                (frame[start], frame[start + 1]) = (0xFF, 0xD9)
                for i in stride(from: start + 2, to: end - 3, by: 97) { (frame[i], frame[i + 1], frame[i + 2]) = (0xFF, 0xD8, 0x00) }
                for i in (start + 2)..<(end - 2) where frame[i] == 0xFF && frame[i + 1] == 0xD8 && frame[i + 2] == 0xFF { frame[i + 2] = 0 }
            }
            if k == count - 1 { frame = Array(frame.prefix(frame.count / 2)) }
            stream += frame
        }
        var splitter = JPEG.StreamSplitter()
        stream.withUnsafeBytes { splitter.consume($0, at: 0) }
        splitter.finish(at: stream.count)
        #expect(splitter.frames.count == count, "\(splitter.frames.count) frames found in \(count)")
        let file = Fixtures.temporaryFolder().appendingPathComponent("scrambled.mjpeg")
        try Data(stream).write(to: file)
        let (_, counts) = try runToEnd(try CaptureDevice.file(file))
        #expect(counts.captured == count, "\(counts)")
    }

    @Test("an MJPEG whose first frame is gray delivers its colour frames in colour (they came gray), the gray one with neutral chroma")
    func grayFirstFrame() throws {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        var grayImage = try PixelBuffer(width: photo.width, height: photo.height, format: .gray8)
        try ColorConversion.convertToGray(photo, into: &grayImage)
        let gray = try JPEG.encode(grayImage, quality: 90)
        let colour = try [UInt8](Data(contentsOf: Fixtures.astronaut))
        let file = Fixtures.temporaryFolder().appendingPathComponent("gray-first.mjpeg")
        try Data(gray + colour + colour).write(to: file)
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(file))
        try #require(counts.delivered == 3, "\(counts)")
        #expect(recorder.frames.allSatisfy { $0.pixelBuffer.format == .nv12FullRange })
        // The chroma plane: neutral (128) for the gray frame, not for the colour ones.
        func chroma(_ frame: SampleBuffer) -> Set<UInt8> {
            frame.pixelBuffer.withUnsafeBytes(ofPlane: 1) { bytes, plane in
                Set(
                    (0..<plane.height).flatMap { row in
                        (0..<(plane.width * plane.bytesPerPixel)).map { bytes[row * plane.bytesPerRow + $0] }
                    })
            }
        }
        #expect(chroma(recorder.frames[0]) == [128])
        #expect(chroma(recorder.frames[1]).count > 10 && chroma(recorder.frames[2]).count > 10)
    }

    @Test("a folder of JPEG, PGM and PPM images, with an unreadable one skipped")
    func imageFolder() throws {
        let folder = Fixtures.temporaryFolder()
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        try photo.write(to: folder.appendingPathComponent("a.jpg"))
        try photo.write(to: folder.appendingPathComponent("b.ppm"))
        try Data([0x50, 0x36, 0x0A, 0x35]).write(to: folder.appendingPathComponent("c.ppm")) // truncated header
        try photo.write(to: folder.appendingPathComponent("d.jpg"))
        try Data("notes".utf8).write(to: folder.appendingPathComponent("readme.txt"))
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(folder), format: .rgb24)
        try #require(counts.captured == 4 && counts.delivered == 3 && counts.dropped(.corrupt) == 1)
        #expect(recorder.frames.allSatisfy { $0.pixelBuffer.format == .rgb24 && $0.pixelBuffer.width == 512 })
        // The PPM is lossless: identical to the decoded JPEG it was written from.
        #expect(recorder.frames[1].pixelBuffer.packedBytes() == photo.packedBytes())
        let single = try CaptureDevice.file(Fixtures.astronautGray)
        let (one, _) = try runToEnd(single)
        try #require(one.frames.count == 1)
        #expect(one.frames[0].pixelBuffer.format == .gray8)
    }

    @Test("a folder with no image is refused saying what it holds (a folder of videos: each is an input of its own), or that it is empty")
    func folderWithoutImages() throws {
        let videos = Fixtures.temporaryFolder()
        for name in ["b.mkv", "a.mp4", ".hidden"] { try Data("x".utf8).write(to: videos.appendingPathComponent(name)) }
        let empty = Fixtures.temporaryFolder()
        for (folder, words) in [(videos, "its 2 other file(s), 'a.mp4' first, are not read"), (empty, "it is empty")] {
            let error = thrownCaptureError { _ = try CaptureDevice.file(folder) }
            guard case .unreadableFile(let path, let reason)? = error else {
                Issue.record("\(String(describing: error))")
                continue
            }
            #expect(path == folder.path && reason.contains("no JPEG, PNG, PGM or PPM images") && reason.contains(words), "\(reason)")
        }
    }

    @Test("a folder whose first image is gray delivers its colour images in colour (they came gray), the gray one with R = G = B")
    func grayFirstImageInFolder() throws {
        let folder = Fixtures.temporaryFolder()
        try FileManager.default.copyItem(at: Fixtures.astronautGray, to: folder.appendingPathComponent("a.pgm"))
        try FileManager.default.copyItem(at: Fixtures.astronaut, to: folder.appendingPathComponent("b.jpg"))
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(folder))
        try #require(counts.delivered == 2, "\(counts)")
        #expect(recorder.frames.allSatisfy { $0.pixelBuffer.format == .rgb24 }, "\(recorder.frames.map(\.pixelBuffer.format))")
        func greys(_ frame: SampleBuffer) -> Bool {
            let bytes: [UInt8] = frame.pixelBuffer.packedBytes()
            for i in stride(from: 0, to: bytes.count - 2, by: 3) where bytes[i] != bytes[i + 1] || bytes[i + 1] != bytes[i + 2] {
                return false
            }
            return true
        }
        #expect(greys(recorder.frames[0]) && !greys(recorder.frames[1]))
    }

    @Test(
        "a folder of images of different sizes: each a frame of its own size with its own pixels, in RGB24 and in NV12 (an odd image losing its last column and row there)",
        arguments: [PixelFormat.rgb24, .nv12FullRange])
    func mixedSizeFolder(format: PixelFormat) throws {
        let folder = Fixtures.temporaryFolder()
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut) // 512x512
        try photo.write(to: folder.appendingPathComponent("a.jpg"))
        let small = try photo.cropped(to: Rect(x: 100, y: 50, width: 300, height: 200)).copy()
        try small.write(to: folder.appendingPathComponent("b.ppm"))
        let odd = try photo.cropped(to: Rect(x: 7, y: 9, width: 301, height: 333)).copy()
        try odd.write(to: folder.appendingPathComponent("c.ppm"))
        try photo.write(to: folder.appendingPathComponent("d.jpg"))
        let (recorder, counts) = try runToEnd(try CaptureDevice.file(folder), format: format)
        try #require(counts.captured == 4 && counts.delivered == 4 && counts.dropped(.corrupt) == 0, "\(counts)")
        let sizes = recorder.frames.map { [$0.pixelBuffer.width, $0.pixelBuffer.height] }
        let oddSize = format == .rgb24 ? [301, 333] : [300, 332]
        #expect(sizes == [[512, 512], [300, 200], oddSize, [512, 512]], "\(sizes)")
        #expect(recorder.frames.allSatisfy { $0.pixelBuffer.format == format })
        if format == .rgb24 {
            // PPM is lossless: the frames are the images' own pixels.
            #expect(recorder.frames[1].pixelBuffer.packedBytes() == small.packedBytes())
            #expect(recorder.frames[2].pixelBuffer.packedBytes() == odd.packedBytes())
        }
    }

    @Test(
        "a consumer keeping every frame of a file starves its pool: after a second the rest drop as outOfBuffers, and the file still ends")
    func holdingBuffers() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 40, width: 64, height: 48, to: file)
        let recorder = Recorder(holdFirst: 100)
        let (session, output) = try makeSession(try CaptureDevice.file(file), preset: .high, recorder: recorder)
        let log = NotificationLog(session)
        let start = Date()
        try session.startRunning()
        // It used to wait a minute for a buffer and then end as if the file had.
        #expect(log.wait(timeout: 20) { if case .sourceEnded = $0 { true } else { false } } != nil)
        let elapsed = Date().timeIntervalSince(start)
        session.stopRunning()
        let counts = output.counts
        #expect(counts.captured == 40 && counts.delivered == 4) // the pool's size
        #expect(counts.dropped(.outOfBuffers) == 36 && counts.isBalanced)
        #expect(recorder.drops(.outOfBuffers) == 36)
        #expect(elapsed > 0.9 && elapsed < 10, "\(elapsed) s")
        recorder.releaseHeld()
    }

    @Test("frames given back end the starvation: the file is delivered again from the next frame")
    func resumesWhenFramesAreGivenBack() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 400, width: 64, height: 48, to: file)
        let recorder = Recorder(holdFirst: 4) // keeps four, then four more once they are let go
        let (session, output) = try makeSession(try CaptureDevice.file(file), preset: .high, recorder: recorder)
        let log = NotificationLog(session)
        try session.startRunning()
        #expect(eventually { output.counts.dropped(.outOfBuffers) >= 1 })
        recorder.releaseHeld()
        #expect(log.wait(timeout: 20) { if case .sourceEnded = $0 { true } else { false } } != nil)
        session.stopRunning()
        let counts = output.counts
        #expect(counts.captured == 400 && counts.delivered == 8 && counts.isBalanced, "\(counts)")
        let delivered = recorder.frames.map(\.sequenceNumber)
        #expect(delivered.prefix(4) == [0, 1, 2, 3] && delivered.count == 8 && delivered[4] > 4, "\(delivered)")
        recorder.releaseHeld()
    }

    @Test("a stop while a file waits for a buffer its consumer keeps returns at once")
    func stopWhileStarved() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 40, width: 64, height: 48, to: file)
        let recorder = Recorder(holdFirst: 100)
        let (session, output) = try makeSession(try CaptureDevice.file(file), preset: .high, recorder: recorder)
        try session.startRunning()
        #expect(eventually { output.counts.delivered == 4 })
        let start = Date()
        session.stopRunning() // inside the second's wait for a fifth buffer
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed < 0.5, "the stop took \(elapsed) s")
        #expect(output.counts.delivered == 4 && output.counts.isBalanced)
        recorder.releaseHeld()
    }

    @Test("paced at the file's rate, a slow consumer gets late drops like a camera")
    func realTimePacing() throws {
        let file = Fixtures.temporaryFolder().appendingPathComponent("clip.y4m")
        try Y4MWriter.write(frames: 30, width: 64, height: 48, rate: "30:1", to: file)
        let start = Date()
        let (_, counts) = try runToEnd(try CaptureDevice.file(file, realTime: true), delay: 0.1)
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed > 0.9, "paced playback of 1 s took \(elapsed) s")
        #expect(counts.captured == 30 && counts.dropped(.frameWasLate) >= 15)
        #expect(counts.isBalanced && counts.pending == 0)
    }
}
