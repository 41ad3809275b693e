import Dispatch
import Foundation
import FrameKit
import Synchronization

/// Ctrl-C (SIGINT), SIGTERM (what Kubernetes, systemd and Slurm send) and SIGHUP end a run cleanly:
/// the summary is printed, files are finished.
///
/// One pair of dispatch sources for the whole process, installed on first use and never
/// cancelled: on Linux, cancelling a signal source stops that signal reaching every other
/// source for it (a batch whose first input's watch ended then ignored SIGTERM). Watches are
/// handlers added to and removed from that one registry.
enum SignalWatch {
    final class Watch: Sendable {
        let id: UInt64
        init(id: UInt64) { self.id = id }
        func cancel() { _ = SignalWatch.handlers.withLock { $0.removeValue(forKey: id) } }
    }

    private static let handlers = Mutex<[UInt64: @Sendable () -> Void]>([:])
    private static let nextID = Atomic<UInt64>(0)
    /// Whether SIGINT or SIGTERM has arrived: a watch started after that fires at once. For the
    /// process's life (the executable makes one run; a signal to a process means "stop").
    private static let received = Atomic<Bool>(false)
    /// When the first signal arrived (`DispatchTime` uptime nanoseconds).
    private static let firstAt = Atomic<UInt64>(0)

    /// The signals a watch catches: SIGHUP too (the terminal or SSH session closed, a
    /// supervisor's reload), which ended a run by its default action, without a summary.
    private static let numbers = [SIGINT, SIGTERM, SIGHUP]

    /// The process's signal sources; `nonisolated(unsafe)` because it is written once, by the
    /// lazy initialiser of a `static let` (which runs exactly once, thread-safely), and never after.
    ///
    /// The signals are blocked in this thread first, never ignored: libdispatch registers its
    /// signalfd on its manager thread some time after `resume()`, and a signal arriving before
    /// that stays pending (the signalfd reads it then) where `SIG_IGN` discarded it — a run
    /// cancelled in its first tenth of a second went on to its end. (libdispatch's own worker
    /// threads block both already; threads started after this inherit the mask.)
    nonisolated(unsafe) private static let sources: [DispatchSourceSignal] = {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for number in numbers { sigaddset(&blocked, number) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        let queue = DispatchQueue(label: "framekit.signals")
        return numbers.map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let now = DispatchTime.now().uptimeNanoseconds
                let again = SignalWatch.received.exchange(true, ordering: .sequentiallyConsistent)
                if !again { SignalWatch.firstAt.store(now, ordering: .sequentiallyConsistent) }
                let current = SignalWatch.handlers.withLock { Array($0.values) }
                // A second signal while nothing is watching yet (a start-up that hangs on a
                // stream's open), or one a second or more after the first while the run is still
                // stopping (a batch input's open that takes its whole timeout): the default
                // action, as a user pressing Ctrl-C twice expects. One within the second is a
                // repeat (a job script forwarding the TERM the scheduler also sent), not a
                // second request: it must not cost the summary.
                let sinceFirst = now &- SignalWatch.firstAt.load(ordering: .sequentiallyConsistent)
                if again && (current.isEmpty || sinceFirst >= 1_000_000_000) { dieOfSignal(number) }
                for handler in current { handler() }
            }
            source.resume()
            return source
        }
    }()

    /// Ends the process by `number`'s default action (killed by it, as a shell reports it). The
    /// signal is unblocked in this thread only, so it is delivered here and now, not left pending
    /// for the signalfd.
    private static func dieOfSignal(_ number: Int32) -> Never {
        signal(number, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, number)
        pthread_sigmask(SIG_UNBLOCK, &only, nil)
        raise(number)
        // Unreachable unless the default action is somehow not to die: the same status as one.
        _exit(128 + number)
    }

    /// Catches the signals from now on. The executable calls this first for the commands that
    /// watch for them, so that a signal during start-up (opening the camera, loading the model:
    /// before the run's watch exists) stops the run as soon as it starts, instead of the default
    /// action killing the process with no summary and status 143.
    static func install() { _ = sources }

    /// Calls `handler` on SIGINT or SIGTERM until the watch is cancelled — at once if one has
    /// already arrived. (A signal landing while the watch is being added may call it twice:
    /// handlers only raise flags.)
    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> Watch {
        _ = sources
        let id = nextID.add(1, ordering: .relaxed).newValue
        handlers.withLock { $0[id] = handler }
        if received.load(ordering: .sequentiallyConsistent) { handler() }
        return Watch(id: id)
    }
}
