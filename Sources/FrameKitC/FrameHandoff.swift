import Foundation
import FrameKit
import Synchronization

/// Hands a session's frames to a caller that pulls them (fk_source_next), one at a time,
/// through the output's own pull interface (``VideoDataOutput/sampleBuffers``): the caller is
/// busy between two calls, so a real-time source drops the frames it is too slow for as
/// `frame_was_late` and the next call gets the newest; a file waits for the caller. The output
/// counts every frame itself. How the source ended (its last frame taken, a runtime error, an
/// interruption) comes through the session's notifications.
///
/// `@unchecked Sendable`: `iterator` is used by one ``next()`` at a time — `busy` lets one in
/// and turns a second, from another thread, away with an error (framekit.h: a source belongs to
/// one thread at a time) — and that call waits for its task to end before returning; `end` is
/// read and written with `condition` locked.
final class FrameHandoff: @unchecked Sendable {
    enum Outcome {
        case frame(SampleBuffer)
        case ended
        case failed(CaptureError)
    }

    /// The source as the caller named it (credentials redacted), for errors.
    let sourceName: String
    private var iterator: VideoDataOutput.SampleBufferSequence.AsyncIterator
    private let condition = NSCondition()
    private var end: Outcome?
    private let busy = Atomic<Bool>(false)

    /// Claims `output`'s frames (before its session starts: no frame goes to the delegate).
    init(output: VideoDataOutput, sourceName: String) throws(CaptureError) {
        self.sourceName = sourceName
        iterator = output.sampleBuffers.makeAsyncIterator()
        try iterator.claim()
    }

    func notify(_ notification: SessionNotification) {
        switch notification {
        case .sourceEnded: finish(.ended)
        case .runtimeError(let error): finish(.failed(error))
        // A stream reconnects: interruptionEnded, a runtime error or (a recording served
        // again) sourceEnded follows.
        case .wasInterrupted(.streamDisconnected): break
        case .wasInterrupted(.videoDeviceInUseByAnotherClient): finish(.failed(.deviceBusy(path: sourceName)))
        case .wasInterrupted(.videoDeviceNotAvailable): finish(.failed(.deviceLost(path: sourceName)))
        // Posted after any of the above, and alone when the caller closes the source.
        case .didStopRunning: finish(.ended)
        default: break
        }
    }

    private func finish(_ outcome: Outcome) {
        condition.lock()
        if end == nil { end = outcome }
        condition.broadcast()
        condition.unlock()
    }

    /// The next frame, or how the source ended; waits for one or the other. Nil when another
    /// thread is in this call already (misuse, refused rather than left to hang).
    func next() -> Outcome? {
        guard busy.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return nil }
        defer { busy.store(false, ordering: .releasing) }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: Result<SampleBuffer?, any Error> = .success(nil)
        // The pull interface is async; the calling thread (the C caller's, never one of Swift's
        // cooperative pool) waits for it.
        Task {
            do { result = .success(try await self.iterator.next()) } catch { result = .failure(error) }
            done.signal()
        }
        done.wait()
        switch result {
        case .success(let frame?): return .frame(frame)
        case .failure(let error as CaptureError): return .failed(error)
        case .failure(let error): return .failed(.configuration("\(error)"))
        case .success(nil):
            // The frames have ended; the notification saying why is posted by then or soon
            // (the session posts it, then didStopRunning, whenever it stops).
            condition.lock()
            defer { condition.unlock() }
            while end == nil { condition.wait() }
            return end ?? .ended
        }
    }
}
