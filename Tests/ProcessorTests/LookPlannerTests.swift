import FrameKit
import Testing

@testable import FrameProcessors

/// What the tracker looks at next, with no detector and no pixels: the planner driven frame by
/// frame, its looks compared with the schedule's promises.
@Suite("LookPlanner: what a tracker looks at next, frame by frame")
struct LookPlannerTests {
    /// 1280x720 shrunk by half for a whole-frame pass (faces from 64 px are its to see), tiled.
    func planner() -> LookPlanner {
        var planner = LookPlanner(policy: .standard)
        planner.planTiles(width: 1280, height: 720, scale: 0.5)
        return planner
    }

    /// The inline looks of frames `frames`, nothing lost, the camera and faces still or not.
    func inline(
        _ planner: inout LookPlanner, frames: ClosedRange<Int>, interval: Int = 4, still: Bool = false,
        pan: (dx: Double, dy: Double)? = nil, lost: [Int: [Box]] = [:]
    ) -> [Int: [PassLook]] {
        var looks: [Int: [PassLook]] = [:]
        for frame in frames {
            let gone = lost[frame] ?? []
            let first = planner.isFirst
            let these = planner.inlineLooks(
                frame: frame, interval: interval, still: still, tracksStill: still, lost: gone, lostInView: gone, pan: pan, edgeLooks: 2)
            if !these.isEmpty { looks[frame] = these }
            planner.pace(base: interval, changed: first, still: still, wholeFramePass: these.contains(.region(nil)), quiet: 12)
        }
        return looks
    }

    @Test(
        "inline: the first frame looks at the whole frame and every tile; then the whole frame every interval and one tile every two intervals, between them"
    )
    func inlineRhythm() throws {
        var planner = planner()
        let tiles = try #require(planner.plan?.tiles)
        #expect(tiles.count == 6)
        let looks = inline(&planner, frames: 1...24)
        #expect(looks[1] == [.region(nil)] + tiles.map { .region($0) })
        let whole = looks.filter { $0.value.contains(.region(nil)) }.keys.sorted()
        #expect(whole == [1, 5, 9, 13, 17, 21], "\(whole)")
        let tileFrames = looks.filter { !$0.value.contains(.region(nil)) }.keys.sorted()
        #expect(tileFrames == [10, 18], "a tile every eight frames, never on a whole-frame pass's: \(tileFrames)")
        #expect(looks[10] == [.region(tiles[0])] && looks[18] == [.region(tiles[1])], "the tiles in turn")
    }

    @Test("inline: a large face lost calls for a whole-frame pass at once; a small one in view for the tile that holds it")
    func inlineLosses() throws {
        var planner = planner()
        _ = inline(&planner, frames: 1...2)
        let large = Box(x: 300, y: 200, width: 120, height: 120)
        let small = Box(x: 1100, y: 600, width: 30, height: 30)
        let looks = inline(&planner, frames: 3...3, lost: [3: [large]])
        #expect(looks[3] == [.region(nil)])
        let smallLooks = inline(&planner, frames: 4...4, lost: [4: [small]])
        let tile = try #require(smallLooks[4]?.first)
        guard case .region(let region?) = tile else { throw Failure("\(smallLooks)") }
        #expect(TilePlan.holds(region, small))
    }

    @Test("inline, under a pan: passes on schedule look at the entering edge twice, then at the whole frame")
    func inlineEdge() throws {
        var planner = planner()
        _ = inline(&planner, frames: 1...4, pan: (dx: 3, dy: 0))
        let looks = inline(&planner, frames: 5...16, pan: (dx: 3, dy: 0)).sorted { $0.key < $1.key }.map(\.value)
        let kinds = looks.map { $0.contains(.region(nil)) ? "whole" : $0.contains(where: \.isEdge) ? "edge" : "tile" }
        #expect(Array(kinds.filter { $0 != "tile" }.prefix(3)) == ["edge", "edge", "whole"], "\(kinds)")
        // The scene moves right: the camera turns left, and the left edge comes into view.
        guard case .edge(let strip, let scale) = looks[0][0] else { throw Failure("\(looks)") }
        #expect(strip.x == 0 && strip.height == 720 && scale == 1)
    }

    @Test("inline, a still scene: whole-frame passes go further apart, doubling up to the quiet interval")
    func inlineQuiet() {
        var planner = planner()
        let looks = inline(&planner, frames: 1...60, still: true)
        let whole = looks.filter { $0.value.contains(.region(nil)) }.keys.sorted()
        let gaps = zip(whole.dropFirst(), whole).map { $0 - $1 }
        #expect(gaps.prefix(4) == [4, 8, 12, 12], "\(whole)")
    }

    @Test(
        "background: the whole frame first, then a tile every other pass until each has had its turn, then every third; the sweep's first tile is flagged"
    )
    func backgroundRegions() throws {
        var planner = planner()
        let tiles = try #require(planner.plan?.tiles)
        var regions: [Rect?] = []
        var starts: [Int] = []
        for pass in 1...24 {
            let (region, sweepStarts) = planner.nextRegion()
            regions.append(region)
            if sweepStarts { starts.append(pass) }
        }
        let tileTurns = regions.indices.filter { regions[$0] != nil }.map { $0 + 1 }
        #expect(tileTurns == [2, 4, 6, 8, 10, 12, 15, 18, 21, 24], "\(tileTurns)")
        #expect(regions[1] == tiles[0] && regions[11] == tiles[5] && regions[14] == tiles[0])
        #expect(starts == [2])
    }

    @Test(
        "background: the sweep's first job is every tile where the scene may hide small faces, one tile where it may not; the first job is the whole frame"
    )
    func backgroundJobs() throws {
        var planner = planner()
        let tiles = try #require(planner.plan?.tiles)
        let first = planner.backgroundLooks(frame: 1, sweepAtOnce: true, mayHideSmallFaces: true, pan: nil, edgeLooks: 2)
        #expect(first.looks == [.region(nil)] && !first.sweep)
        let sweep = planner.backgroundLooks(frame: 2, sweepAtOnce: true, mayHideSmallFaces: true, pan: nil, edgeLooks: 2)
        #expect(sweep.sweep && sweep.looks == tiles.map { .region($0) })
        var large = self.planner()
        _ = large.backgroundLooks(frame: 1, sweepAtOnce: true, mayHideSmallFaces: false, pan: nil, edgeLooks: 2)
        let one = large.backgroundLooks(frame: 2, sweepAtOnce: true, mayHideSmallFaces: false, pan: nil, edgeLooks: 2)
        #expect(!one.sweep && one.looks == [.region(tiles[0])])
    }

    @Test("another policy changes the plan: tiles at every third pass while sweeping")
    func policyIsHonoured() {
        var policy = TrackerPolicy.standard
        policy.tileTurnWhileSweeping = 3
        var planner = LookPlanner(policy: policy)
        planner.planTiles(width: 1280, height: 720, scale: 0.5)
        let turns = (1...9).filter { _ in planner.nextRegion().region != nil }
        #expect(turns == [3, 6, 9])
    }
}

/// A test's failure with its message.
private struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
