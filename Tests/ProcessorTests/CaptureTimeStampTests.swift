import Foundation
import FrameKit
import Synchronization
import Testing

@Suite("Capture times stamped into the picture (CaptureTimeStamp)")
struct CaptureTimeStampTests {
    @Test(
        "a value stamped reads back in every pixel format, and after JPEG at the preview's quality; a picture with no stamp reads as none",
        arguments: [PixelFormat.nv12VideoRange, .nv12FullRange, .i420, .yuyv, .bgra32, .rgb24, .gray8])
    func roundTrip(format: PixelFormat) throws {
        for value: UInt32 in [0, 1, 0xDEAD_BEEF, .max, 1_733_212_345] {
            var picture = try PixelBuffer(width: 1280, height: 720, format: format)
            // A busy background (a ramp), as a camera's picture would be under the code.
            picture.withUnsafeMutableBytes(ofPlane: 0) { bytes, _ in
                for i in 0..<bytes.count { bytes[i] = UInt8(truncatingIfNeeded: i &* 7) }
            }
            #expect(CaptureTimeStamp.read(from: picture) == nil || value == 0, "a ramp read as a stamp")
            CaptureTimeStamp.stamp(value, on: &picture)
            #expect(CaptureTimeStamp.read(from: picture) == value, "\(format) \(value)")
            let jpeg = try JPEG.decode(try JPEG.encode(picture, quality: 75), to: .rgb24)
            #expect(CaptureTimeStamp.read(from: jpeg) == value, "\(format) \(value) after JPEG")
        }
    }

    @Test("one instant converted to wall-clock time again and again, on a busy machine, is the same millisecond each time")
    func wallClockHoldsUnderLoad() {
        // The preview stamps a frame's capture time into its picture and sends the same time
        // beside its faces: two conversions of one instant, which must agree. A conversion read
        // the two clocks one after the other, and a thread preempted between them was off by
        // the preemption (the browser test saw 1 frame of 178 disagree, with two busy loops).
        // Instants 10 ns apart about the one where the conversion rounds up to the next
        // millisecond: a lead estimated afresh each time (off by up to a few hundredths of a
        // millisecond) rounded them either way, one conversion to the next.
        let start = Timestamp.now()
        let coarse = (0...1000).map { Timestamp(nanoseconds: start.nanoseconds + UInt64($0) * 1000) }
        let step = coarse.indices.dropFirst().first { coarse[$0].wallClockMilliseconds != coarse[$0 - 1].wallClockMilliseconds } ?? 500
        let instants = (0..<1000).map { Timestamp(nanoseconds: coarse[step].nanoseconds - 5000 + UInt64($0) * 10) }
        let references = instants.map(\.wallClockMilliseconds)
        let stop = Atomic(false)
        let spinning = Atomic(0)
        for _ in 0..<4 { // busy loops beside the conversions, twice the cores here
            Thread {
                spinning.add(1, ordering: .relaxed)
                var spin = 0
                while !stop.load(ordering: .relaxed) { spin &+= 1 }
            }.start()
        }
        while spinning.load(ordering: .relaxed) < 4 { Thread.sleep(forTimeInterval: 0.001) }
        var worst: Int64 = 0
        var disagreed = 0
        let started = Timestamp.now()
        while Timestamp.now().seconds(since: started) < 1 { // about 1 s of conversions, among them
            for _ in 0..<10 {
                for (instant, reference) in zip(instants, references) {
                    if instant.wallClockMilliseconds != reference { disagreed += 1 }
                    worst = max(worst, abs(instant.wallClockMilliseconds - reference))
                }
            }
        }
        stop.store(true, ordering: .relaxed)
        #expect(disagreed == 0 && worst == 0, "\(disagreed) conversions disagreed, by up to \(worst) ms")
    }

    @Test("the stage stamps the frame's own capture instant in wall-clock milliseconds")
    func stage() throws {
        let captured = Timestamp.now()
        let wall = Date().timeIntervalSince1970 * 1000
        Thread.sleep(forTimeInterval: 0.2) // the stage runs later than the capture
        var frame = SampleBuffer(
            pixelBuffer: try PixelBuffer(width: 640, height: 480, format: .nv12VideoRange), presentationTime: 0, sequenceNumber: 0,
            captureInstant: captured)
        try CaptureTimeStamp().process(&frame)
        let stamped = try #require(CaptureTimeStamp.read(from: frame.pixelBuffer))
        let expected = UInt32(truncatingIfNeeded: Int64(wall.rounded()))
        #expect(abs(Int64(stamped) - Int64(expected)) < 50, "stamped \(stamped), captured at \(expected)")
        // Too narrow for the code (40 blocks of at least 2 px): left alone.
        var narrow = try PixelBuffer(width: 64, height: 64, format: .gray8)
        CaptureTimeStamp.stamp(7, on: &narrow)
        #expect(CaptureTimeStamp.read(from: narrow) == nil)
    }
}
