import FrameKit
import FrameTestSupport
import Testing

@testable import FrameProcessors

/// The background schedule's memory of frames: bounded, the pass's frame kept, images reused.
@Suite("FrameHistory: the frames a late pass's faces are carried through")
struct FrameHistoryTests {
    func gray(_ level: UInt8) throws -> PixelBuffer { try .uniformGray(width: 64, height: 48, level: level) }

    @Test(
        "past its length it thins out: never more images than the length, the pass's frame and the newest always kept, each a copy of its frame"
    )
    func bounded() throws {
        var history = FrameHistory(length: TrackerPolicy.standard.historyLength)
        for frame in 1...40 {
            history.remember(try gray(UInt8(frame)), frame: frame)
            #expect(history.frames.count <= history.length)
            #expect(history.frames.first?.frame == 1 && history.frames.last?.frame == frame)
        }
        for (frame, image) in history.frames {
            image.withUnsafeBytes(ofPlane: 0) { bytes, _ in #expect(bytes.allSatisfy { $0 == UInt8(frame) }) }
        }
        let kept = history.frames.map(\.frame)
        #expect(kept == kept.sorted() && Set(kept).count == kept.count, "\(kept)")
    }

    @Test("a pass starting on the newest frame lets every older image go")
    func passStarts() throws {
        var history = FrameHistory(length: 8)
        for frame in 1...5 { history.remember(try gray(UInt8(frame)), frame: frame) }
        history.passStarts(on: 5)
        #expect(history.frames.map(\.frame) == [5])
        history.remember(try gray(6), frame: 6)
        #expect(history.frames.map(\.frame) == [5, 6])
    }
}
