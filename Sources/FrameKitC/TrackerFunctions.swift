import CFrameKitAPI
import FrameKit
import Synchronization

/// What an `fk_tracker` is: the tracker, on the inline schedule (a pass on the caller's thread
/// when one is due: the caller sets the pace), and the frames it has seen.
final class TrackerHandle: Sendable {
    let tracker: FaceTracker
    let frames = Atomic<Int64>(0)
    init(_ tracker: FaceTracker) { self.tracker = tracker }
}

@_cdecl("fk_tracker_options_init")
public func fkTrackerOptionsInit(_ options: UnsafeMutablePointer<fk_tracker_options>?) {
    let defaults = FaceTracker.Options()
    let interval: Int
    if case .inline(let n) = defaults.schedule { interval = n } else { interval = 4 }
    options?.pointee = fk_tracker_options(pass_interval: Int32(interval), quiet_interval: Int32(defaults.quietInterval))
}

@_cdecl("fk_tracker_new")
public func fkTrackerNew(
    _ detector: OpaquePointer?, _ options: UnsafePointer<fk_tracker_options>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        let detector = try Handle.object(detector, as: FaceDetector.self, "detector")
        guard let out else { throw InvalidArgument("out is NULL") }
        var settings = FaceTracker.Options()
        if let given = options?.pointee {
            guard (1...1000).contains(given.pass_interval), (1...1000).contains(given.quiet_interval) else {
                throw InvalidArgument("pass_interval \(given.pass_interval) and quiet_interval \(given.quiet_interval) must be in 1...1000")
            }
            settings.schedule = .inline(interval: Int(given.pass_interval))
            settings.quietInterval = Int(given.quiet_interval)
        }
        out.pointee = Handle.make(TrackerHandle(try FaceTracker(detector: detector, options: settings)))
    }
}

@_cdecl("fk_track")
public func fkTrack(
    _ tracker: OpaquePointer?, _ frame: OpaquePointer?, _ faces: UnsafeMutablePointer<UnsafeMutablePointer<fk_face>?>?,
    _ count: UnsafeMutablePointer<Int>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    faces?.pointee = nil
    count?.pointee = 0
    return reporting(error) {
        let handle = try Handle.object(tracker, as: TrackerHandle.self, "tracker")
        // A wrapped frame is borrowed storage, which the tracker copies wherever it keeps one.
        let pixels = try FrameHandle.from(frame).pixels
        guard let faces, let count else { throw InvalidArgument("faces or count is NULL") }
        let found = try handle.tracker.faces(in: pixels)
        handle.frames.add(1, ordering: .relaxed)
        FaceList.handOut(found, to: faces, count: count)
    }
}

@_cdecl("fk_tracker_get_stats")
public func fkTrackerGetStats(_ tracker: OpaquePointer?, _ stats: UnsafeMutablePointer<fk_tracker_stats>?) -> fk_status {
    reporting(nil) {
        let handle = try Handle.object(tracker, as: TrackerHandle.self, "tracker")
        guard let stats else { throw InvalidArgument("stats is NULL") }
        stats.pointee = fk_tracker_stats(frames: handle.frames.load(ordering: .relaxed), passes: Int64(handle.tracker.statistics.passes))
    }
}

@_cdecl("fk_tracker_reset")
public func fkTrackerReset(_ tracker: OpaquePointer?) {
    (try? Handle.object(tracker, as: TrackerHandle.self, "tracker"))?.tracker.reset()
}

@_cdecl("fk_tracker_free")
public func fkTrackerFree(_ tracker: OpaquePointer?) { Handle.release(tracker) }
