import Dispatch
import Foundation
import FrameKit
import Synchronization

/// The delegate of one detect run: prints each result, feeds the stats, and ends the run.
final class DetectRun: VideoDataOutputSampleBufferDelegate {
    enum End: Sendable {
        case frames, duration, endOfInput, interrupted, outputClosed
        case failed(String, exitCode: Int32)
    }

    let stats = StatsRecorder()
    private let frameLimit: Int?
    private let printFrames: Bool
    private let writer: MJPEGWriter?
    // What this run reported: frames printed and drops seen until it ended. The summary is
    // built from these, so it agrees with the lines printed (the output may count a frame or
    // two more that arrived while the session was stopping).
    private let state = Mutex<(seen: Int, end: End?, counts: OutputCounts)>((0, nil, OutputCounts()))
    private let ended = DispatchSemaphore(value: 0)

    /// Tags each line with the camera it came from (several cameras at once).
    private let source: String?
    /// Where the lines go (stdout; a batch input's own file); false: it can take no more.
    private let sink: @Sendable (String) -> Bool
    /// Each delivered frame's number and face boxes, as they are (bench's scoring run), printed or not.
    private let faces: (@Sendable (Int, [Rect]) -> Void)?

    /// How much of a file's timeline the run covers, from its first frame (the --start point,
    /// or the file's own first timestamp, which need not be 0).
    private let mediaDuration: Double?
    private let firstMediaTime = Mutex<Double?>(nil)
    /// Whether a processor's failure has been said on stderr (once a run: the summary counts
    /// every such frame).
    private let saidFailure = Atomic(false)

    init(
        frameLimit: Int?, mediaDuration: Double? = nil, printFrames: Bool = true, writer: MJPEGWriter? = nil, source: String? = nil,
        sink: @escaping @Sendable (String) -> Bool = { Console.out($0) }, faces: (@Sendable (Int, [Rect]) -> Void)? = nil
    ) {
        self.mediaDuration = mediaDuration
        self.source = source
        self.sink = sink
        self.faces = faces
        self.frameLimit = frameLimit
        self.printFrames = printFrames
        self.writer = writer
    }

    func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        let delivered = Timestamp.now() // the processors have run: this is the result's moment
        if pastMediaEnd(frame.presentationTime) { return }
        guard count(nil) else { return }
        stats.recordResult(of: frame, resultAt: delivered)
        stats.sampleMemoryIfDue(frame.sequenceNumber)
        if let writer {
            // A failed write (a full disk) ends the run; the stream is removed at close, reported then.
            do { try writer.append(frame.pixelBuffer) } catch { finish(reason: .outputClosed) }
        }
        faces?(Int(frame.sequenceNumber), frame.faces.map(\.bounds))
        guard printFrames else { return }
        let latency = delivered.seconds(since: frame.captureInstant) * 1000
        let faces = JSON.array(
            frame.faces.map { f in
                .object([
                    ("x", .int(f.bounds.x)), ("y", .int(f.bounds.y)), ("width", .int(f.bounds.width)), ("height", .int(f.bounds.height)),
                    ("confidence", f.confidence.map { .number($0, decimals: 3) } ?? .null),
                    ("landmarks", .array(f.landmarks.map { .array([.number($0.x, decimals: 1), .number($0.y, decimals: 1)]) }))
                ])
            })
        let written = sink(
            JSON.object(
                (source.map { [("source", JSON.string($0))] } ?? []) + [
                    ("frame", .int(Int(frame.sequenceNumber))), ("timestamp", .number(frame.presentationTime, decimals: 6)),
                    ("width", .int(frame.pixelBuffer.width)), ("height", .int(frame.pixelBuffer.height)),
                    ("faces", faces), ("latency_ms", .number(latency, decimals: 3))
                ]
            ).text)
        // The reader went away (`| head`) or the disk is full: end the run; files still get written.
        if !written { finish(reason: .outputClosed) }
    }

    func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
        if pastMediaEnd(frame.presentationTime) { return }
        guard count(frame.reason) else { return }
        stats.recordDrop(frame)
        if frame.reason == .processingFailed, !saidFailure.exchange(true, ordering: .relaxed) {
            Console.err(
                "framekit: \(source.map { "\($0): " } ?? "")processing failed on frame \(frame.sequenceNumber): \(frame.failure ?? "no reason given")"
                    + " (each such frame is a processing_failed drop in the summary)")
        }
    }

    /// Whether `time` is at or after the file's end point; the run ends there.
    private func pastMediaEnd(_ time: Double) -> Bool {
        guard let mediaDuration else { return false }
        let first = firstMediaTime.withLock { f in
            if f == nil { f = time }
            return f!
        }
        guard time >= first + mediaDuration - 1e-9 else { return false }
        finish(reason: .duration)
        return true
    }

    /// Counts a captured frame; false once the run has ended (frames after the limit are
    /// still counted by the output but not printed).
    private func count(_ drop: DropReason?) -> Bool {
        let (accept, reached) = state.withLock { s -> (Bool, Bool) in
            guard s.end == nil else { return (false, false) }
            s.seen += 1
            s.counts.captured += 1
            if let drop { s.counts.dropped[drop, default: 0] += 1 } else { s.counts.delivered += 1 }
            return (true, frameLimit.map { s.seen >= $0 } ?? false)
        }
        if reached { finish(reason: .frames) }
        return accept
    }

    func notify(_ notification: SessionNotification) {
        switch notification {
        case .sourceEnded: finish(reason: .endOfInput)
        case .runtimeError(let error): finish(reason: .failed("\(error)", exitCode: ExitCode.code(for: error, whileRunning: true)))
        case .wasInterrupted(.streamDisconnected): Console.err("framekit: the stream dropped; reconnecting")
        case .interruptionEnded: Console.err("framekit: the stream is back")
        case .wasInterrupted(let reason):
            finish(reason: .failed("capture interrupted: \(reason.rawValue)", exitCode: ExitCode.temporaryFailure))
        default: break
        }
    }

    func finish(reason: End) {
        let first = state.withLock { s -> Bool in
            guard s.end == nil else { return false }
            s.end = reason
            return true
        }
        if first { ended.signal() }
    }

    /// Frames captured, delivered and dropped as this run reported them.
    var counts: OutputCounts { state.withLock { $0.counts } }

    /// Blocks until the run ends (or `deadline` passes).
    func wait(until deadline: Date?) -> End {
        if let deadline {
            if ended.wait(timeout: .now() + max(0, deadline.timeIntervalSinceNow)) == .timedOut { finish(reason: .duration) }
        } else {
            ended.wait()
        }
        return state.withLock { $0.end ?? .duration }
    }
}

extension StatsRecorder {
    /// Memory is sampled every 30 frames: reading /proc costs ~20 µs.
    func sampleMemoryIfDue(_ sequence: UInt64) {
        if sequence % 30 == 0 { sampleMemory(poolBytesInUse: nil) }
    }
}
