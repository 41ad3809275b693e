import Foundation
import FrameKit
import Testing

@testable import FramePreview

@Suite("The H.264 stream's fragments, as each viewer gets them (VideoFragmentRing, no sockets)")
struct VideoFragmentRingTests {
    /// Fragment `n`'s bytes: [n], a key frame every `gop`.
    func publish(_ ring: VideoFragmentRing, _ numbers: ClosedRange<Int>, gop: Int = 10) {
        for n in numbers { ring.publish(fragment: [UInt8(n)], isKey: n % gop == 0) }
    }

    /// A ring holding `capacity` fragments, its stream begun (init segment [0xFF]).
    func begun(capacity: Int = 50) -> VideoFragmentRing {
        let ring = VideoFragmentRing(capacity: capacity)
        ring.publish(header: [0xFF], codec: "avc1")
        return ring
    }

    /// Everything the viewer at `cursor` is due now.
    func drain(_ ring: VideoFragmentRing, _ cursor: inout VideoFragmentRing.Cursor) -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let next = ring.next(for: &cursor) { out.append(next) }
        return out
    }

    @Test("nothing before the first init segment; then the init segment, then fragments from the newest key frame, in order")
    func newViewer() {
        let ring = VideoFragmentRing(capacity: 50)
        var cursor = VideoFragmentRing.Cursor()
        #expect(ring.next(for: &cursor) == nil && ring.codec == nil)
        ring.publish(header: [0xFF], codec: "avc1.64001F")
        #expect(ring.codec == "avc1.64001F")
        publish(ring, 1...25)
        #expect(drain(ring, &cursor) == [[0xFF], [20], [21], [22], [23], [24], [25]])
        publish(ring, 26...27)
        #expect(drain(ring, &cursor) == [[26], [27]])
        #expect(cursor.skipped == 0)
    }

    @Test("a viewer that joins between key frames waits for the next one rather than getting frames it cannot decode")
    func waitsForKey() {
        let ring = begun(capacity: 50)
        ring.publish(fragment: [1], isKey: false) // the stream's first key frame is gone already
        ring.publish(fragment: [2], isKey: false)
        var cursor = VideoFragmentRing.Cursor()
        #expect(drain(ring, &cursor) == [[0xFF]])
        ring.publish(fragment: [3], isKey: true)
        ring.publish(fragment: [4], isKey: false)
        #expect(drain(ring, &cursor) == [[3], [4]])
    }

    @Test("two viewers get the same fragments from one publisher; one that falls behind the ring skips to a key frame, its loss counted")
    func slowViewer() {
        let ring = begun(capacity: 20)
        publish(ring, 10...12)
        var fast = VideoFragmentRing.Cursor()
        var slow = VideoFragmentRing.Cursor()
        #expect(drain(ring, &fast) == [[0xFF], [10], [11], [12]])
        #expect(drain(ring, &slow) == [[0xFF], [10], [11], [12]])
        // The slow one reads nothing while 40 more frames come: the ring holds 20 (33…52).
        for n in 13...52 {
            ring.publish(fragment: [UInt8(n)], isKey: n % 10 == 0)
            #expect(ring.next(for: &fast) == [UInt8(n)])
        }
        #expect(drain(ring, &slow) == [[50], [51], [52]])
        #expect(slow.skipped == 37 && fast.skipped == 0) // 13…49 never sent to it
    }

    @Test("a new stream (the camera switched to another size): its init segment, then its own key frame; the old fragments are gone")
    func newStream() {
        let ring = begun(capacity: 50)
        publish(ring, 10...15)
        var cursor = VideoFragmentRing.Cursor()
        #expect(drain(ring, &cursor).count == 7)
        ring.publish(header: [0xFE], codec: "avc1.42")
        #expect(ring.codec == "avc1.42")
        #expect(drain(ring, &cursor) == [[0xFE]])
        ring.publish(fragment: [1], isKey: true)
        #expect(drain(ring, &cursor) == [[1]])
    }
}

@Suite("The faces beside the H.264 stream, by frame time (VideoFaceTimeline, no sockets)")
struct VideoFaceTimelineTests {
    func decode(_ text: String) throws -> [(t: Double, c: Int, faces: [[Int]])] {
        let object = try #require((try JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any])
        let frames = try #require(object["frames"] as? [[String: Any]])
        return frames.map { ($0["t"] as? Double ?? -1, $0["c"] as? Int ?? -1, $0["faces"] as? [[Int]] ?? []) }
    }

    @Test(
        "the frames after a time, oldest first, each with its capture time and boxes; a client behind a restarted timeline gets it all; old entries go"
    )
    func after() throws {
        let timeline = VideoFaceTimeline(capacity: 5)
        for i in 0..<8 {
            timeline.publish(
                .init(time: Double(i) / 30, capture: UInt32(1000 + i), faces: i == 7 ? [Rect(x: 1, y: 2, width: 3, height: 4)] : []))
        }
        #expect(try decode(timeline.json(after: nil)).map(\.c) == [1003, 1004, 1005, 1006, 1007])
        let later = try decode(timeline.json(after: 5.0 / 30 + 0.0001))
        #expect(later.map(\.c) == [1006, 1007] && later.last?.faces == [[1, 2, 3, 4]])
        #expect(abs((later.first?.t ?? 0) - 6.0 / 30) < 1e-6)
        // A page that still asks after the old stream's times gets the new stream whole.
        timeline.reset()
        timeline.publish(.init(time: 0, capture: 1, faces: []))
        #expect(try decode(timeline.json(after: 7.0 / 30)).map(\.c) == [1])
    }
}
