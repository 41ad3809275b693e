import Foundation
import FrameCapture
import FrameCore
import Synchronization

/// Frames decoded by libavcodec from a file or a network stream (see ``MediaSourceDescription``),
/// copied into pooled buffers in their 8-bit Y'CbCr layout (I420, NV12 or GRAY8), with the
/// stream's timestamps as presentation times.
///
/// Files not in real time: every frame, as fast as the consumer takes it (only damaged frames
/// drop, as `corrupt`, and frames past a second's wait for a buffer a consumer keeps, as
/// `outOfBuffers`). Real time (`realTime` files, live streams): frames at their timestamps'
/// pace, late ones dropped by the outputs like a camera's. A timestamp gap is one
/// `discontinuity` drop per missing frame. A live stream that fails, ends or stays silent past
/// the timeout posts `wasInterrupted(.streamDisconnected)`, is reopened with back-off, and posts
/// `interruptionEnded` when it is back; when the attempts run out, capture ends with
/// `CaptureError.streamUnavailable`. A live stream that ended cleanly and, reopened, begins
/// with the very frame it began with before is a recording served again (an http response with
/// no length, a server sending a file to each client): it ends there, as a file does.
final class MediaSource: FrameSource {
    let configuration: SourceConfiguration
    let description: MediaSourceDescription
    var isRealTime: Bool { description.realTime }
    private let pool: BufferPool
    private let slot = InputSlot()
    private var pending = EventQueue()
    /// A decoded frame waiting for its moment (paced files).
    private var held: SampleBuffer?
    private var index: UInt64 = 0
    /// The media time paced playback counts from (the first frame's, moved on past a forged jump).
    private var firstTime: Double?
    /// The most frames one jump in the timestamps is counted as (discontinuity drops).
    static let maximumGapDrops = 10_000
    private var lastTime: Double?
    private var startInstant = Timestamp.now()
    /// Not real-time: how long no buffer has been free (a consumer keeping frames).
    private var starvation = StarvationGuard()
    /// Live: how a recording served again is told from a stream that came back (`Replay`).
    private var replay = Replay()

    /// The open input, shared with the thread that stops the session (which interrupts it).
    final class InputSlot: Sendable {
        // MediaInput is Sendable; the slot is swapped on reconnects.
        let input = Mutex<MediaInput?>(nil)
        let stopping = Atomic<Bool>(false)
        func interrupt() {
            stopping.store(true, ordering: .relaxed)
            input.withLock { $0?.interrupt() }
        }
    }

    init(description: MediaSourceDescription, configuration: SourceConfiguration) throws(CaptureError) {
        self.description = description
        self.configuration = configuration
        do {
            pool = try BufferPool(
                width: description.size.width, height: description.size.height, format: configuration.pixelFormat,
                capacity: configuration.bufferCount)
        } catch { throw .pixelBuffer(error) }
    }

    func usageReporter() -> @Sendable () -> BufferPool.Usage { { [pool] in pool.usage } }
    func interrupter() -> (@Sendable () -> Void)? { { [slot] in slot.interrupt() } }

    func start() throws(CaptureError) {
        slot.stopping.store(false, ordering: .relaxed)
        let input: MediaInput
        if let probed = description.probed.take() { input = probed } else { input = try open() }
        if description.start > 0 {
            do { try input.seek(to: description.start) } catch {
                switch error {
                case .failed(let reason), .interrupted(let reason), .rejected(let reason):
                    throw description.failure(reason)
                }
            }
        }
        slot.input.withLock { $0 = input }
        index = 0
        firstTime = nil
        lastTime = nil
        held = nil
        pending.removeAll()
        reconnection = nil
        startInstant = Timestamp.now()
        starvation = StarvationGuard()
        replay = Replay()
        carried = (0, 0)
        gaveFrame = false
    }

    private func open() throws(CaptureError) -> MediaInput {
        do {
            return try MediaInput(
                description.location, threads: description.decoderThreads, timeout: description.timeout, isLive: description.isLive)
        } catch {
            switch error {
            case .interrupted(let reason), .failed(let reason), .rejected(let reason):
                throw description.failure(reason)
            }
        }
    }

    func next() throws(CaptureError) -> SourceEvent {
        if !pending.isEmpty { return pending.removeFirst() }
        if let frame = held { return release(frame) }
        if var r = reconnection {
            if slot.stopping.load(ordering: .relaxed) { return .endOfStream }
            defer { if reconnection != nil { reconnection = r } }
            return try tryToReconnect(&r)
        }
        guard let input = slot.input.withLock({ $0 }) else { return .endOfStream }
        // Not real-time: the buffer is taken before a frame is decoded, so a wait for one
        // decodes nothing and can end in a stop.
        var waited: PixelBuffer?
        if !isRealTime, !starvation.take(from: pool, into: &waited) { return .idle }
        switch input.next() {
        case .frame(let decoded):
            // A seek lands on the key frame before `start`: the frames up to it are skipped.
            if description.start > 0 && decoded.time >= 0 && decoded.time < description.start - 0.5 / description.frameRate {
                return .idle
            }
            return try deliver(decoded, into: waited.take())
        case .corrupt:
            return drop(.corrupt)
        case .end:
            guard description.isLive else { return .endOfStream }
            // Only where a server commonly writes a file to each client (`Replay`).
            if description.judgesReplays { replay.endedCleanly() }
            return try reconnect(after: "the stream ended")
        case .interrupted(let reason):
            if slot.stopping.load(ordering: .relaxed) { return .endOfStream }
            guard description.isLive else { throw description.failure(reason) }
            return try reconnect(after: reason)
        case .overlong(let reason):
            // The frame it was sending is a corrupt drop; the connection, whose demuxer is
            // mid-frame, is dropped and opened again (as any drop, within --reconnect).
            guard description.isLive else { throw description.failure(reason) }
            pending.append(try reconnect(after: reason))
            return drop(.corrupt)
        case .failed(let reason):
            guard description.isLive else { throw description.failure(reason) }
            return try reconnect(after: reason)
        }
    }

    private func drop(_ reason: DropReason, at time: Double? = nil) -> SourceEvent {
        defer { index += 1 }
        let t = time ?? lastTime ?? Double(index) / description.frameRate
        return .dropped(DroppedFrame(sequenceNumber: index, presentationTime: t, reason: reason))
    }

    /// `waited`: not real-time, the buffer taken for it (nil: none was free, a drop).
    private func deliver(_ decoded: MediaInput.DecodedFrame, into waited: consuming PixelBuffer?) throws(CaptureError) -> SourceEvent {
        let time = decoded.time >= 0 ? decoded.time : (lastTime.map { $0 + 1 / description.frameRate } ?? 0)
        // From a start point, numbers are still indices in the file: the first frame read is
        // frame time x rate (at a constant rate, the index of that frame), not frame 0.
        if description.start > 0, lastTime == nil, index == 0, decoded.time >= 0 {
            index = UInt64(max(0, Int(saturating: (decoded.time * description.frameRate).rounded())))
        }
        // A jump forward in the timestamps: the frames between were lost upstream.
        if let last = lastTime, time - last > 2.5 / description.frameRate {
            // A jump of 2^62 s is a forged timestamp, not 10^20 lost frames: at most
            // `maximumGapDrops` are counted, and a paced run does not wait out the rest of the
            // gap (it would wait for ever): its timeline goes on from the frame after the last.
            let missing = Int(saturating: ((time - last) * description.frameRate).rounded()) - 1
            for k in 0..<min(Self.maximumGapDrops, max(0, missing)) {
                pending.append(drop(.discontinuity, at: last + Double(k + 1) / description.frameRate))
            }
            if missing > Self.maximumGapDrops, let first = firstTime {
                firstTime = first + (time - last) - 1 / description.frameRate
            }
        }
        lastTime = max(lastTime ?? time, time)
        if firstTime == nil { firstTime = time }
        // A damaged (concealed) frame, or one whose size changed mid-stream, is not delivered.
        guard !decoded.damaged, decoded.width & ~1 == description.size.width, decoded.height & ~1 == description.size.height else {
            pending.append(drop(.corrupt, at: time))
            return pending.removeFirst()
        }
        // Real-time: none free is a drop, as a camera's. (`take()`: a second reference to the
        // buffer would make the copy below allocate a new one.)
        guard var buffer = isRealTime ? pool.makeBuffer() : waited.take() else {
            pending.append(drop(.outOfBuffers, at: time))
            return pending.removeFirst()
        }
        guard decoded.copy(into: &buffer) else {
            pending.append(drop(.corrupt, at: time))
            return pending.removeFirst()
        }
        gaveFrame = true
        var announceBack = false
        if description.judgesReplays {
            switch replay.judge(buffer) {
            case .replayed:
                slot.input.withLock { $0 = nil }
                return .endOfStream
            case .cameBack: announceBack = true
            case .goesOn: break
            }
        }
        let sequence = index
        index += 1
        let frame = SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: sequence, captureInstant: .now())
        if announceBack {
            held = frame
            return .notice(.interruptionEnded)
        }
        if !pending.isEmpty {
            held = frame
            return pending.removeFirst()
        }
        return release(frame)
    }

    /// Paced files: a frame waits for its moment on the media timeline (in short steps, so a
    /// stop is seen). Live streams and unpaced files: at once.
    private func release(_ frame: SampleBuffer) -> SourceEvent {
        guard isRealTime, !description.isLive, let first = firstTime else {
            held = nil
            return .frame(frame)
        }
        let due = startInstant.adding(seconds: frame.presentationTime - first)
        let now = Timestamp.now()
        if due.seconds(since: now) > 0.05 {
            held = frame
            Timestamp.sleep(until: now.adding(seconds: 0.05))
            return .idle
        }
        Timestamp.sleep(until: due)
        held = nil
        var paced = frame
        paced.captureInstant = .now()
        return .frame(paced)
    }

    /// A live stream that dropped, between reconnection attempts.
    private struct Reconnection {
        var attempt = 0
        var delay: Double
        var nextTry: Timestamp
        var reason: String
    }
    private var reconnection: Reconnection?

    /// A live stream dropped: say so at once, then try to reopen it on the following calls,
    /// with back-off (each call waits at most 50 ms, so a stop is seen). A connection that
    /// gave no frame goes on with the attempts and back-off of the one before (a server that
    /// answers and closes at once is retried `attempts` times, not for ever); one still waiting to say
    /// it is back has said nothing since the interruption, so says nothing now.
    private func reconnect(after reason: String) throws(CaptureError) -> SourceEvent {
        slot.input.withLock { $0 = nil }
        let delay = description.reconnect.initialDelay
        let (attempt, wait) = gaveFrame ? (0, delay) : (carried.attempts, max(delay, carried.delay))
        gaveFrame = false
        reconnection = Reconnection(attempt: attempt, delay: wait, nextTry: Timestamp.now().adding(seconds: wait), reason: reason)
        if replay.connectionEnded() { return .idle }
        return .notice(.wasInterrupted(.streamDisconnected))
    }
    /// The attempts the last reconnection took and its next back-off (where the next goes on
    /// from when its connection gave no frame).
    private var carried: (attempts: Int, delay: Double) = (0, 0)
    /// The connection under way gave a frame (delivered or not).
    private var gaveFrame = false

    private func tryToReconnect(_ r: inout Reconnection) throws(CaptureError) -> SourceEvent {
        let policy = description.reconnect
        guard r.attempt < policy.attempts else {
            throw .streamUnavailable(
                url: redactingCredentials(description.location),
                reason: redactingCredentials("gave up after \(policy.attempts) attempts: \(r.reason)"))
        }
        let now = Timestamp.now()
        if r.nextTry.seconds(since: now) > 0 {
            Timestamp.sleep(until: min(r.nextTry, now.adding(seconds: 0.05)))
            return .idle
        }
        r.attempt += 1
        do {
            let input = try open()
            slot.input.withLock { $0 = input }
            lastTime = nil // a new connection starts a new timeline
            firstTime = nil
            reconnection = nil
            carried = (r.attempt, min(policy.maxDelay, r.delay * 2))
            // After a clean end, "back" waits for the first frame: it may be the recording's
            // first again.
            return replay.reopened() ? .idle : .notice(.interruptionEnded)
        } catch {
            r.reason = "\(error)"
            r.delay = min(policy.maxDelay, r.delay * 2)
            r.nextTry = Timestamp.now().adding(seconds: r.delay)
            return .idle
        }
    }

    func stop() {
        slot.input.withLock { $0 = nil }
        pending.removeAll()
        held = nil
    }
}
