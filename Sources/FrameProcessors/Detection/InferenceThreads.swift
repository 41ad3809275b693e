import COpenCVShim
import FrameCore
import Synchronization

/// How many threads one network pass uses: process-wide, for every ``FaceDetector`` network
/// set up after the call (XNNPACK's) and for OpenCV's parallel loops (the Haar detector's).
///
/// The default, a thread per CPU this process may use (`CPUAllowance`: its affinity mask and
/// its cgroup's CPU quota, not the machine's cores), suits a file read as fast as it goes:
/// its passes are on the frame path, and each is done sooner on every CPU. A live source's
/// passes run beside its frame path: there two threads a pass found no more faces than one,
/// idle or beside two busy loops (report split, paced; docs/performance.md), and one leaves the
/// other CPU to the frame path. Several cameras sharing a ``PassScheduler`` of two lanes run
/// two passes at once; at a thread per CPU each, the passes' threads outnumber the CPUs and
/// the frame path waits behind them. `framekit detect` sets one thread a pass for a live
/// source or several sources (its summary's `inference_threads` says what a run used).
///
/// Set it before the first pass: a network keeps the count it was set up with (the process's
/// networks are shared by its detectors; one set up after the change has the new count), and OpenCV does not guard the change against
/// parallel loops running on other threads at that moment.
///
/// ```swift
/// InferenceThreads.set(1) // before the trackers' first passes
/// ```
public enum InferenceThreads {
    private static let requested = Atomic<Int>(0)

    /// Sets the threads a pass may use (1 or more; 0: a thread per CPU this process may use)
    /// and returns the number in use before.
    @discardableResult
    public static func set(_ count: Int) -> Int {
        let before = current
        requested.store(max(0, count), ordering: .relaxed)
        _ = fkcv_set_threads(Int32(clamping: max(0, count)))
        return before
    }

    /// The threads a pass may use now.
    public static var current: Int {
        let count = requested.load(ordering: .relaxed)
        return count > 0 ? min(count, 64) : CPUAllowance.current.count
    }
}
