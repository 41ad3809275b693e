import FrameKit
import FrameMedia
import FrameTestSupport
import Testing

/// `Replay`: how a live source tells a recording served again from a stream that came back,
/// connection by connection, without a server. (`#expect` takes no mutating call: each step's
/// answer is taken first.)
@Suite("a recording served again, told from a stream that came back")
struct ReplayTests {
    /// A 16x16 gray frame of one level.
    func frame(_ value: UInt8) throws -> PixelBuffer { try .uniformGray(width: 16, height: 16, level: value) }

    /// One connection: its frames judged in turn.
    func connection(_ replay: inout Replay, _ values: [UInt8]) throws -> [Replay.Verdict] {
        try values.map { replay.judge(try frame($0)) }
    }

    /// A connection of `values` that ends cleanly, and the next opened: whether "back" waits.
    func endCleanlyAndReopen(_ replay: inout Replay, after values: [UInt8]) throws -> (announcedAlready: Bool, backWaits: Bool) {
        _ = try connection(&replay, values)
        replay.endedCleanly()
        let announced = replay.connectionEnded()
        return (announced, replay.reopened())
    }

    @Test("a moving stream that ended cleanly and begins again with its first frame is replayed; with another first frame it came back")
    func replayedOrBack() throws {
        var replay = Replay()
        let reopened = try endCleanlyAndReopen(&replay, after: [1, 2, 3])
        #expect(!reopened.announcedAlready && reopened.backWaits)
        let again = try connection(&replay, [1])
        #expect(again == [.replayed])

        var other = Replay()
        _ = try endCleanlyAndReopen(&other, after: [1, 2, 3])
        let back = try connection(&other, [9, 2])
        #expect(back == [.cameBack, .goesOn])
    }

    @Test("never judged: a stream that broke off with an error, or one whose picture never moved (a still pattern served live)")
    func notJudged() throws {
        var broke = Replay()
        _ = try connection(&broke, [1, 2, 3])
        _ = broke.connectionEnded() // no endedCleanly(): an error
        let brokeWaits = broke.reopened()
        let afterBreak = try connection(&broke, [1, 2])
        #expect(!brokeWaits && afterBreak == [.goesOn, .goesOn])

        var still = Replay()
        let stillReopened = try endCleanlyAndReopen(&still, after: [UInt8](repeating: 7, count: Replay.framesToSeeMotion + 1))
        let afterStill = try connection(&still, [7])
        #expect(!stillReopened.backWaits && afterStill == [.goesOn])

    }

    @Test(
        "a reopened connection that fails before its first frame: the interruption is not announced again, and the next one is still judged"
    )
    func failedBeforeFirstFrame() throws {
        var replay = Replay()
        _ = try endCleanlyAndReopen(&replay, after: [1, 2])
        let gaveNoFrame = replay.connectionGaveNoFrame
        let announcedAlready = replay.connectionEnded()
        let backWaits = replay.reopened()
        #expect(gaveNoFrame && announcedAlready && backWaits)
        let next = try connection(&replay, [1])
        #expect(next == [.replayed])
    }
}
