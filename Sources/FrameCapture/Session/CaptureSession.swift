import Dispatch
import Foundation
import FrameCore
import Synchronization

/// Joins inputs to outputs and runs capture (as AVCaptureSession).
///
/// Changes made between ``beginConfiguration()`` and ``commitConfiguration()`` (which nest;
/// only the outermost commit applies) take effect together; while running, that is how a
/// camera is switched. ``startRunning()`` and ``stopRunning()`` block until capture has
/// started or stopped and are safe to call from any thread (not from an output's delegate
/// queue). Misuse is a thrown ``CaptureError``, never a trap.
public final class CaptureSession: Sendable, TransactionalSession {
    struct Configuration: Sendable {
        var inputs: [CaptureDeviceInput] = []
        var outputs: [any FrameSink] = []
        var preset: SessionPreset = .high
    }

    private struct State {
        var configuration = ConfigurationTransaction(Configuration())
        var pipeline: CapturePipeline?
        var interrupted = false
        var observers: [UInt64: @Sendable (SessionNotification) -> Void] = [:]
        var nextObserver: UInt64 = 0
        /// stopRunning() was called inside a configuration: capture stops at its commit.
        var stopAtCommit = false
        /// The running pipeline's devices' format and frame duration, as it started with them:
        /// a commit after either changed rebuilds it (a rate set while running applied never).
        var runningDeviceSettings: [DeviceSettings] = []
    }

    /// What a device was told to capture, read when a pipeline starts.
    private struct DeviceSettings: Equatable {
        var format: CaptureDeviceFormat?
        var frameDuration: Double?

        static func of(_ configuration: Configuration) -> [DeviceSettings] {
            configuration.inputs.map {
                DeviceSettings(format: $0.device.activeFormat, frameDuration: $0.device.activeVideoMinFrameDuration)
            }
        }
    }

    /// Which session each output belongs to: an output feeds one session at a time.
    private static let owners = Mutex<[ObjectIdentifier: ObjectIdentifier]>([:])

    private let state = Mutex(State())
    // Serialises start, stop and commit (each blocks while capture starts or stops); never
    // held while observers run.
    private let operations = Mutex(())
    private let notificationQueue = DispatchQueue(label: "framekit.session.notifications")

    public init() {}

    deinit {
        let me = ObjectIdentifier(self)
        Self.owners.withLock { owners in owners = owners.filter { $0.value != me } }
    }

    // MARK: Configuration

    public func beginConfiguration() { state.withLock { $0.configuration.begin() } }

    /// Applies the changes since the outermost ``beginConfiguration()``. While running, the
    /// capture pipeline is rebuilt with them; if that fails the previous configuration keeps
    /// running and the error is thrown.
    public func commitConfiguration() throws(CaptureError) {
        let ready: (Configuration, stop: Bool)? = try state.withLock { (s) throws(CaptureError) -> (Configuration, stop: Bool)? in
            guard let staged = try s.configuration.end() else { return nil }
            defer { s.stopAtCommit = false }
            return (staged, s.stopAtCommit)
        }
        guard let (configuration, stop) = ready else { return }
        if stop {
            state.withLock { $0.configuration.commit(configuration) }
            stopRunning()
            return
        }
        var flushes: [OutputFlush] = []
        defer { for flush in flushes { flush.wait() } }
        try operations.withLock { (_) throws(CaptureError) in try apply(configuration, flushing: &flushes) }
    }

    /// Runs `changes` between begin and commit, all or nothing: if `changes` throws, everything
    /// it changed is undone (the configuration is as before the call) and the error rethrown.
    public func configure(_ changes: () throws -> Void) throws { try configureAllOrNothing(changes) }

    func withConfiguration<R>(_ body: (inout ConfigurationTransaction<Configuration>) -> R) -> R {
        state.withLock { body(&$0.configuration) }
    }

    private func mutate(_ change: (inout Configuration) throws(CaptureError) -> Void) throws(CaptureError) {
        // Outside a configuration the change is computed and applied under the operations
        // lock, so two threads changing the session at once cannot lose one another's change.
        guard !(try state.withLock { (s) throws(CaptureError) in try s.configuration.stage(change) }) else { return }
        var flushes: [OutputFlush] = []
        defer { for flush in flushes { flush.wait() } }
        try operations.withLock { (_) throws(CaptureError) in
            var next = state.withLock { $0.configuration.committed }
            try change(&next)
            try apply(next, flushing: &flushes)
        }
    }

    /// Makes `next` the committed configuration, rebuilding the running pipeline if needed.
    /// Called with ``operations`` held; the flushes of outputs it stops are added to `flushes`,
    /// for the caller to wait on once it has let go of the lock.
    private func apply(_ next: Configuration, flushing flushes: inout [OutputFlush]) throws(CaptureError) {
        do {
            let (previous, running, devices) = state.withLock { s in (s.configuration.committed, s.pipeline != nil, s.runningDeviceSettings)
            }
            state.withLock { $0.configuration.commit(next) }
            guard running else { return }
            let changed =
                previous.inputs.map(ObjectIdentifier.init) != next.inputs.map(ObjectIdentifier.init)
                || previous.preset != next.preset
                || previous.outputs.map { ObjectIdentifier($0) } != next.outputs.map { ObjectIdentifier($0) }
                || DeviceSettings.of(next) != devices
            guard changed else { return }
            // A reconfiguration, not a restart: no stop/start notifications, numbering goes on,
            // the outputs that stay keep their queued frames and their async consumers.
            let removed = previous.outputs.filter { o in !next.outputs.contains { $0 === o } }
            let stopped = stopPipeline(finishing: removed, reconfiguring: true)
            let sequence = stopped.nextSequence
            flushes += stopped.flushes
            do throws(CaptureError) {
                try startPipeline(next, sequenceOffset: sequence, reconfiguring: true)
                post(.inputsChanged)
            } catch {
                state.withLock { $0.configuration.commit(previous) }
                do throws(CaptureError) { try startPipeline(previous, sequenceOffset: sequence, reconfiguring: true) } catch {
                    // The old configuration cannot run again either: capture has stopped.
                    flushes += stopped.keptOutputs.map { $0.finish() }
                    post(.didStopRunning)
                }
                throw error
            }
        }
    }

    /// The current (committed) configuration's preset.
    public var sessionPreset: SessionPreset { state.withLock { $0.configuration.current.preset } }

    /// Sets the preset; throws when the current input cannot supply it.
    public func setSessionPreset(_ preset: SessionPreset) throws(CaptureError) {
        try mutate { (c) throws(CaptureError) in
            if let device = c.inputs.first?.device, !device.supportsSessionPreset(preset) {
                throw .unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description))
            }
            c.preset = preset
        }
    }

    /// Whether the current input offers a size for `preset` (true with no input yet).
    public func canSetSessionPreset(_ preset: SessionPreset) -> Bool {
        state.withLock { s in s.configuration.current.inputs.first.map { $0.device.supportsSessionPreset(preset) } ?? true }
    }

    public var inputs: [CaptureDeviceInput] { state.withLock { $0.configuration.current.inputs } }
    public var outputs: [any CaptureOutput] { state.withLock { $0.configuration.current.outputs } }

    /// FrameKit sessions take one video input at a time (swap it to switch cameras).
    public func canAddInput(_ input: CaptureDeviceInput) -> Bool {
        state.withLock { s in s.configuration.current.inputs.isEmpty }
    }

    public func addInput(_ input: CaptureDeviceInput) throws(CaptureError) {
        try mutate { (c) throws(CaptureError) in
            guard !c.inputs.contains(where: { $0 === input }) else { throw .configuration("\(input) is already in the session") }
            guard c.inputs.isEmpty else {
                throw .configuration(
                    "the session already has an input; remove it first (inside begin/commitConfiguration to switch cameras)")
            }
            c.inputs.append(input)
        }
    }

    public func removeInput(_ input: CaptureDeviceInput) {
        try? mutate { c in c.inputs.removeAll { $0 === input } }
    }

    public func canAddOutput(_ output: any CaptureOutput) -> Bool {
        let sink = output.sessionEndpoint.sink
        return state.withLock { s in !s.configuration.current.outputs.contains { $0 === sink } }
    }

    public func addOutput(_ output: any CaptureOutput) throws(CaptureError) {
        let sink = output.sessionEndpoint.sink
        let key = ObjectIdentifier(sink)
        let me = ObjectIdentifier(self)
        let taken = Self.owners.withLock { owners -> Bool in
            if let owner = owners[key], owner != me { return true }
            owners[key] = me
            return false
        }
        guard !taken else { throw .configuration("that output belongs to another session; remove it there first") }
        do {
            try mutate { (c) throws(CaptureError) in
                guard !c.outputs.contains(where: { $0 === sink }) else { throw .configuration("that output is already in the session") }
                c.outputs.append(sink)
            }
        } catch {
            if !outputs.contains(where: { $0 === sink }) { _ = Self.owners.withLock { $0.removeValue(forKey: key) } }
            throw error
        }
    }

    public func removeOutput(_ output: any CaptureOutput) {
        let sink = output.sessionEndpoint.sink
        try? mutate { c in c.outputs.removeAll { $0 === sink } }
        let key = ObjectIdentifier(sink)
        let me = ObjectIdentifier(self)
        Self.owners.withLock { owners in if owners[key] == me { owners[key] = nil } }
    }

    // MARK: Running

    public var isRunning: Bool { state.withLock { $0.pipeline?.isRunning ?? false } }
    public var isInterrupted: Bool { state.withLock { $0.interrupted } }

    /// Starts capture and returns once frames are flowing (or throws why they cannot).
    public func startRunning() throws(CaptureError) {
        var flushes: [OutputFlush] = []
        defer { for flush in flushes { flush.wait() } }
        try operations.withLock { (_) throws(CaptureError) in
            let (configuration, inTransaction, running) = state.withLock { s in
                (s.configuration.committed, s.configuration.isOpen, s.pipeline?.isRunning ?? false)
            }
            guard !inTransaction else {
                throw .configuration("startRunning() inside beginConfiguration()/commitConfiguration(); commit first")
            }
            guard !running else { return }
            flushes = stopPipeline().flushes // one that ended by itself
            do throws(CaptureError) {
                try startPipeline(configuration)
            } catch {
                post(.runtimeError(error))
                throw error
            }
        }
    }

    /// Stops capture; returns when the capture thread has ended and queued frames have
    /// reached the delegates (called from a delegate, it returns without waiting for its own
    /// queue: the rest is delivered after the delegate returns). Inside a configuration,
    /// capture stops when it is committed (``isRunning`` stays true until then).
    public func stopRunning() { stopRunningLater().wait() }

    /// Stops capture now and returns the wait for the outputs' queues (and the stop's
    /// notification after it), for a caller that must let go of its own lock first.
    func stopRunningLater() -> OutputFlush {
        let deferred = state.withLock { s -> Bool in
            if s.configuration.isOpen { s.stopAtCommit = true }
            return s.configuration.isOpen
        }
        guard !deferred else { return .none }
        let stopped = operations.withLock { _ in stopPipeline() }
        // Holds the session until it has said it stopped (a MultiCamSession lets go of its
        // camera sessions before it waits).
        return OutputFlush(waitingFor: stopped.flushes) { [self] in
            if stopped.wasRunning { post(.didStopRunning) }
        }
    }

    /// Buffers in use by consumers now and at peak, across the running source.
    public var bufferUsage: BufferPool.Usage? { state.withLock { $0.pipeline?.bufferUsage() } }

    private func startPipeline(_ configuration: Configuration, sequenceOffset: UInt64 = 0, reconfiguring: Bool = false) throws(CaptureError)
    {
        guard let input = configuration.inputs.first else { throw .noInput }
        let pipeline = try CapturePipeline(
            input: input, outputs: configuration.outputs, preset: configuration.preset,
            sequenceOffset: sequenceOffset, onNotice: { [weak self] in self?.post($0) },
            onEnd: { [weak self] in self?.pipelineEnded($0) })
        let wasInterrupted = state.withLock { s in
            s.pipeline = pipeline
            s.runningDeviceSettings = DeviceSettings.of(configuration)
            defer { s.interrupted = false }
            return s.interrupted
        }
        pipeline.run()
        if !reconfiguring { post(.didStartRunning) }
        if wasInterrupted { post(.interruptionEnded) }
    }

    /// What stopping a pipeline left to do.
    private struct Stopped {
        /// The number a successor pipeline continues from.
        var nextSequence: UInt64 = 0
        var wasRunning = false
        /// The stopped outputs' flushes, to wait on with no lock held.
        var flushes: [OutputFlush] = []
        /// Outputs a reconfiguration did not stop (they go on with the next pipeline).
        var keptOutputs: [any FrameSink] = []
    }

    /// Stops the running pipeline and its outputs (when reconfiguring, only the `removed` ones:
    /// the others go on with the next pipeline). The caller waits on the flushes and posts
    /// `didStopRunning` once it holds no lock.
    private func stopPipeline(finishing removed: [any FrameSink] = [], reconfiguring: Bool = false) -> Stopped {
        let pipeline = state.withLock { s in
            defer { s.pipeline = nil }
            return s.pipeline
        }
        guard let pipeline else { return Stopped() }
        let wasRunning = pipeline.isRunning
        let flushes = pipeline.stop(finishing: reconfiguring ? removed : nil)
        let kept = reconfiguring ? pipeline.outputs.filter { o in !removed.contains { $0 === o } } : []
        return Stopped(
            nextSequence: pipeline.nextSequence, wasRunning: wasRunning && !reconfiguring, flushes: flushes, keptOutputs: kept)
    }

    /// Called on the capture thread when it ends by itself (error, unplug, end of file).
    private func pipelineEnded(_ notification: SessionNotification) {
        if case .wasInterrupted = notification { state.withLock { $0.interrupted = true } }
        post(notification)
        post(.didStopRunning)
    }

    // MARK: Notifications

    /// Calls `handler` (on a private serial queue) for each notification until the token is
    /// passed to ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (SessionNotification) -> Void) -> ObserverToken {
        state.withLock { s in
            s.nextObserver += 1
            s.observers[s.nextObserver] = handler
            return ObserverToken(id: s.nextObserver)
        }
    }

    public func removeObserver(_ token: ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.id) }
    }

    /// The notifications as an `AsyncSequence` (from now on, until the stream is dropped).
    public var notifications: AsyncStream<SessionNotification> {
        AsyncStream { continuation in
            let token = addObserver { continuation.yield($0) }
            continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        }
    }

    private func post(_ notification: SessionNotification) {
        let handlers = state.withLock { Array($0.observers.values) }
        notificationQueue.async { for handler in handlers { handler(notification) } }
    }

    public struct ObserverToken: Sendable, Hashable { let id: UInt64 }
}
