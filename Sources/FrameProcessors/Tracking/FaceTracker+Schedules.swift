import FrameCore

/// The two schedules' passes for one frame (``FaceTracker/Schedule``): what to look at comes
/// from the `LookPlanner`; here the looks are run (inline) or handed to the worker
/// (background), their faces merged, and the pace set.
extension FaceTracker {
    /// Inline: the planner's looks run on this frame before it is returned.
    func inlinePasses(interval: Int, image: PixelBuffer, gray: PixelBuffer, carried: Carried, state s: inout TrackerState)
        throws(FaceDetectorError)
    {
        // Judged before this frame's passes (where the faces judge it, a track a pass has just
        // renewed starts again where the pass put it, and would look still however the camera
        // moves); a camera that starts moving brings the pass due at once.
        let still = s.cameraStill
        let first = s.planner.isFirst
        let looks = s.planner.inlineLooks(
            frame: s.frame, interval: interval, still: still, tracksStill: s.tracksStill, lost: carried.lost,
            lostInView: carried.lostInView, pan: s.camera.pan, edgeLooks: options.edgeLooks)
        var changed = !carried.lost.isEmpty
        for look in looks {
            if try pass(look, on: image, gray: gray, state: &s) { changed = true }
        }
        let wholeFramePass = looks.contains(.region(nil))
        s.planner.pace(
            base: interval, changed: changed || first, still: still, wholeFramePass: wholeFramePass, quiet: options.quietInterval)
        if options.quietStretches { s.placeAnchors(in: gray, wholeFramePass: wholeFramePass, options: options) }
    }

    /// Background: the results of passes finished since the last frame are merged, and the
    /// next pass is handed to the worker when it is free, the pace allows and the CPU budget
    /// admits it.
    func backgroundPasses(image: PixelBuffer, gray: PixelBuffer, carried: Carried, state s: inout TrackerState)
        throws(FaceDetectorError)
    {
        guard let worker else { return }
        s.history.remember(gray, frame: s.frame)
        let still = s.cameraStill // before a result renews the tracks, as inline
        var changed = !carried.lost.isEmpty
        var wholeFramePass = false
        // Results and whether a pass is still under way, read together: a pass ending between
        // the two looked idle with its result not yet merged, and the next pass's start let go
        // of the frames that result is carried forward through.
        let (results, busy) = worker.poll()
        for result in results {
            s.statistics.recordPass(latency: result.latency, age: s.frame - result.frame)
            // A pass on a frame from before a start over: its boxes are of the old scene.
            guard result.frame > s.startedOver else { continue }
            if s.merge(result.pass, look: result.look, passFrame: result.frame, gray: gray, history: s.history.frames, options: options) {
                changed = true
            }
            // Only a whole-frame pass quiets the pace and places the scene's anchors. The
            // sweep's last tile: every tile has been looked at, the tiles' first sweep is over.
            if result.look == PassLook.region(nil) { wholeFramePass = true }
            if result.endsSweep { s.planner.sweepDone() }
        }
        // The first pass on the first frame itself, where it is quick enough
        // (``Options/firstPassOnFrameWithin``): a cut seen in the image starts over, so its
        // frame is a first frame (the new scene's large faces from that frame); the next pass,
        // the sweep's first turn, goes to the worker from the next frame on.
        if s.planner.isFirst, !busy, firstPassRunsOnFrame {
            let look = PassLook.region(s.planner.nextRegion().region)
            if try pass(look, on: image, gray: gray, state: &s) { changed = true }
            wholeFramePass = wholeFramePass || look == .region(nil)
            s.planner.lastPass = s.frame
        }
        // Back to back (an interval of 1) unless quiet under a still camera.
        s.planner.pace(base: 1, changed: changed, still: still, wholeFramePass: wholeFramePass, quiet: options.quietInterval)
        if options.quietStretches { s.placeAnchors(in: gray, wholeFramePass: wholeFramePass, options: options) }
        if let failure = worker.takeFailure() { throw failure }
        let now = clock()
        let wanted = s.passWantedSince ?? now
        if busy {
            s.statistics.framesWithoutPass &+= 1
        } else if !s.planner.isFirst && s.frame - s.planner.lastPass < s.planner.passInterval {
            // A quiet scene: no pass is wanted yet (the schedule asked for none; not a frame
            // without its pass).
        } else if worker.isClosed {
            // Shut down: no pass, and nothing set aside for one (a shared budget would keep it).
        } else if let admission = worker.scheduler.admit(waitingSince: wanted, now: now) {
            s.passWantedSince = nil
            s.statistics.recordBudgetWait(now - wanted)
            // The tiles' first turn is every tile, back to back (``Options/sweepAtOnce``).
            let job = s.planner.backgroundLooks(
                frame: s.frame, sweepAtOnce: options.sweepAtOnce,
                mayHideSmallFaces: s.mayHideSmallFaces, pan: s.camera.pan, edgeLooks: options.edgeLooks)
            s.beginPass()
            worker.submit(
                s.history.passCopy(of: image), frame: s.frame, looks: job.looks, sweep: job.sweep, closer: s.closerLooks(options),
                admission: admission)
        } else {
            // Over the CPU budget: no pass, and none on a frame kept for later — the pass is
            // made from the frame of the moment it may start.
            s.passWantedSince = wanted
            s.statistics.framesWithoutPass &+= 1
        }
    }
}
