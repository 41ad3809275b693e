import COpenCVShim

/// How many threads OpenCV gives one network pass: its parallel loops are process-wide, so this
/// holds for every detector and every OpenCV call in the process.
///
/// OpenCV's default, a thread per core, suits one camera: its tracker has one pass at a time,
/// and the pass is done sooner on every core. Several cameras sharing a ``PassScheduler`` of two
/// lanes run two passes at once; at a thread per core each, the passes' threads outnumber the
/// cores and the frame path waits behind them. One thread a pass ran more passes a second in
/// all and left the frame path more of its CPU: four paced 720p sources on two cores, idle,
/// went from 3–12 late frames a run to 1–5, processing p99 28–71 ms to 9–45, and recall up on
/// every kind of clip (docs/performance.md).
/// `framekit detect` with several sources sets one thread a pass (its summary's
/// `opencv_threads` says what a run used).
///
/// Set it before any OpenCV work starts (before the trackers' first passes): OpenCV does not
/// guard the change against parallel loops running on other threads at that moment.
///
/// ```swift
/// InferenceThreads.set(1) // before the trackers' first passes
/// ```
public enum InferenceThreads {
    /// Sets the threads a pass may use (1 or more; 0: OpenCV's default, which it works out from
    /// the cores this process may use) and returns the number in use before.
    @discardableResult
    public static func set(_ count: Int) -> Int {
        Int(fkcv_set_threads(Int32(clamping: max(0, count))))
    }

    /// The threads a pass may use now.
    public static var current: Int { Int(fkcv_get_threads()) }
}
