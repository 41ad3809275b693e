import Dispatch
import Foundation
import FrameKit
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM (what Kubernetes, systemd and Slurm send) end a run cleanly:
/// the summary is printed, files are finished.
enum SignalWatch {
    final class Watch {
        let sources: [DispatchSourceSignal]
        init(_ sources: [DispatchSourceSignal]) { self.sources = sources }
        func cancel() { for s in sources { s.cancel() } }
    }

    static func onInterrupt(_ handler: @escaping @Sendable () -> Void) -> Watch {
        let queue = DispatchQueue(label: "framekit.signals")
        return Watch(
            [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler(handler: handler)
                source.resume()
                return source
            })
    }
}
