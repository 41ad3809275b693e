import Dispatch
import Foundation
import FrameCore
import Synchronization

/// Several cameras at once (as AVCaptureMultiCamSession): inputs and outputs are added without
/// connections, and each output is connected to the input it takes frames from.
///
/// Each camera runs on its own capture thread with its own buffers, drop accounting and
/// sequence numbers; frames of every camera carry `captureInstant`s of one clock
/// (CLOCK_MONOTONIC: V4L2's kernel timestamps, the virtual camera's and files' own), so frames
/// from different cameras can be matched by time. A camera that fails or is unplugged stops
/// alone; the others go on. Notifications come tagged with their camera.
///
/// Each camera captures at its device's ``CaptureDevice/activeFormat`` when set, else at
/// ``sessionPreset`` (AVFoundation's multi-camera sessions use `activeFormat` only). A commit
/// while running restarts every camera with the new configuration (a gap of a few frames,
/// reported as drops by none: the cameras stop and start), or keeps the old one running and
/// throws when the new one cannot start.
public final class MultiCamSession: Sendable, TransactionalSession {
    /// Whether this platform can run several cameras at once: always on Linux, where each V4L2
    /// device streams on its own (the USB bus or the sensor interface may still limit what
    /// several cameras can sustain together).
    public static var isMultiCamSupported: Bool { true }

    struct Configuration: Sendable {
        var inputs: [CaptureDeviceInput] = []
        var outputs: [any CaptureOutput] = []
        /// Output → the input it is connected to.
        var connections: [(input: CaptureDeviceInput, output: any CaptureOutput)] = []
        var preset: SessionPreset = .high
    }

    private struct State {
        var configuration = ConfigurationTransaction(Configuration())
        var running = false
        /// One session per camera while running, in the order of the inputs.
        var cameras: [(input: CaptureDeviceInput, session: CaptureSession)] = []
        var observers: [UInt64: @Sendable (CaptureDevice, SessionNotification) -> Void] = [:]
        var nextObserver: UInt64 = 0
    }

    private let state = Mutex(State())
    private let operations = Mutex(())

    public init() {}

    // MARK: Configuration

    public func beginConfiguration() { state.withLock { $0.configuration.begin() } }

    /// Applies the changes since the outermost ``beginConfiguration()``; while running, every
    /// camera restarts with them (if they cannot start, the previous configuration runs again
    /// and the error is thrown).
    public func commitConfiguration() throws(CaptureError) {
        guard let next = try state.withLock({ (s) throws(CaptureError) in try s.configuration.end() }) else { return }
        try apply { _ in next }
    }

    /// Computes the next configuration from the committed one and makes it the committed one,
    /// all under the operations lock (so two threads changing the session at once cannot lose
    /// one another's change); while running, every camera restarts with it, or the previous
    /// configuration runs again and the error is thrown.
    private func apply(_ make: (Configuration) throws(CaptureError) -> Configuration) throws(CaptureError) {
        var flush = OutputFlush.none
        defer { flush.wait() }
        try operations.withLock { (_) throws(CaptureError) in
            let (previous, running) = state.withLock { ($0.configuration.committed, $0.running) }
            let next = try make(previous)
            state.withLock { $0.configuration.commit(next) }
            guard running else { return }
            flush = stopCameras()
            do throws(CaptureError) { try startCameras(next) } catch {
                state.withLock { $0.configuration.commit(previous) }
                try? startCameras(previous)
                throw error
            }
        }
    }

    /// Runs `changes` between begin and commit, all or nothing.
    public func configure(_ changes: () throws -> Void) throws { try configureAllOrNothing(changes) }

    func withConfiguration<R>(_ body: (inout ConfigurationTransaction<Configuration>) -> R) -> R {
        state.withLock { body(&$0.configuration) }
    }

    private func mutate(_ change: (inout Configuration) throws(CaptureError) -> Void) throws(CaptureError) {
        guard !(try state.withLock { (s) throws(CaptureError) in try s.configuration.stage(change) }) else { return }
        try apply { (previous) throws(CaptureError) in
            var next = previous
            try change(&next)
            return next
        }
    }

    public var inputs: [CaptureDeviceInput] { state.withLock { $0.configuration.current.inputs } }
    public var outputs: [any CaptureOutput] { state.withLock { $0.configuration.current.outputs } }
    /// Each output with the input it is connected to.
    public var connections: [(input: CaptureDeviceInput, output: any CaptureOutput)] {
        state.withLock { $0.configuration.current.connections }
    }
    public var sessionPreset: SessionPreset { state.withLock { $0.configuration.current.preset } }

    /// The preset for cameras whose device has no ``CaptureDevice/activeFormat``.
    public func setSessionPreset(_ preset: SessionPreset) throws(CaptureError) {
        try mutate { c in c.preset = preset }
    }

    /// Adds a camera. Its frames go nowhere until an output is connected to it. A device may
    /// be in the session once.
    public func addInputWithNoConnections(_ input: CaptureDeviceInput) throws(CaptureError) {
        try mutate { (c) throws(CaptureError) in
            guard !c.inputs.contains(where: { $0 === input || $0.device === input.device || $0.device.uniqueID == input.device.uniqueID })
            else { throw .configuration("\(input.device.localizedName) is already in the session") }
            c.inputs.append(input)
        }
    }

    public func addOutputWithNoConnections(_ output: any CaptureOutput) throws(CaptureError) {
        try mutate { (c) throws(CaptureError) in
            guard !c.outputs.contains(where: { $0 === output }) else { throw .configuration("that output is already in the session") }
            c.outputs.append(output)
        }
    }

    /// Connects `output` to `input` (AVFoundation: `addConnection(AVCaptureConnection(inputPorts:output:))`).
    /// Both must be in the session; an output takes frames from one input.
    public func addConnection(from input: CaptureDeviceInput, to output: any CaptureOutput) throws(CaptureError) {
        try mutate { (c) throws(CaptureError) in
            guard c.inputs.contains(where: { $0 === input }) else { throw .configuration("connect an input added to the session") }
            guard c.outputs.contains(where: { $0 === output }) else { throw .configuration("connect an output added to the session") }
            guard !c.connections.contains(where: { $0.output === output }) else {
                throw .configuration("that output is already connected; an output takes frames from one camera")
            }
            c.connections.append((input, output))
        }
    }

    /// Removes a camera and its connections.
    public func removeInput(_ input: CaptureDeviceInput) {
        try? mutate { c in
            c.inputs.removeAll { $0 === input }
            c.connections.removeAll { $0.input === input }
        }
    }

    public func removeOutput(_ output: any CaptureOutput) {
        try? mutate { c in
            c.outputs.removeAll { $0 === output }
            c.connections.removeAll { $0.output === output }
        }
    }

    // MARK: Running

    /// Whether any camera is capturing.
    public var isRunning: Bool { state.withLock { s in s.cameras.contains { $0.session.isRunning } } }

    /// The camera sessions running now, one per input (for their `bufferUsage`, `isInterrupted`).
    public var cameraSessions: [(device: CaptureDevice, session: CaptureSession)] {
        state.withLock { s in s.cameras.map { ($0.input.device, $0.session) } }
    }

    /// Starts every camera; if one cannot start, those started are stopped and the error thrown.
    public func startRunning() throws(CaptureError) {
        try operations.withLock { (_) throws(CaptureError) in
            let (configuration, inTransaction, running) = state.withLock {
                ($0.configuration.committed, $0.configuration.isOpen, $0.running)
            }
            guard !inTransaction else {
                throw .configuration("startRunning() inside beginConfiguration()/commitConfiguration(); commit first")
            }
            guard !running else { return }
            try startCameras(configuration)
        }
    }

    /// Stops every camera and flushes every output (from a delegate, without waiting for its
    /// own queue).
    public func stopRunning() {
        operations.withLock { _ in stopCameras() }.wait()
    }

    private func startCameras(_ configuration: Configuration) throws(CaptureError) {
        guard !configuration.inputs.isEmpty else { throw .noInput }
        var started: [(CaptureDeviceInput, CaptureSession)] = []
        do throws(CaptureError) {
            for input in configuration.inputs {
                let session = CaptureSession()
                session.beginConfiguration()
                try session.addInput(input)
                if input.device.activeFormat == nil { try session.setSessionPreset(configuration.preset) }
                for connection in configuration.connections where connection.input === input {
                    try session.addOutput(connection.output)
                }
                try session.commitConfiguration()
                let device = input.device
                session.addObserver { [weak self] note in self?.post(device, note) }
                started.append((input, session))
                try session.startRunning()
            }
        } catch {
            let flushes = started.map { release($0.1) }
            for flush in flushes { flush.wait() }
            throw error
        }
        state.withLock { s in
            s.cameras = started
            s.running = true
        }
    }

    /// Stops every camera; returns the wait for their outputs' queues, for the caller to run
    /// once it holds no lock.
    private func stopCameras() -> OutputFlush {
        let cameras = state.withLock { s in
            defer {
                s.cameras = []
                s.running = false
            }
            return s.cameras
        }
        // Stopped together: each stop ends its thread.
        let flushes = Mutex<[OutputFlush]>([])
        DispatchQueue.concurrentPerform(iterations: cameras.count) { i in
            let flush = release(cameras[i].session)
            flushes.withLock { $0.append(flush) }
        }
        return OutputFlush(waitingFor: flushes.withLock { $0 })
    }

    /// Stops a camera's session and gives its outputs back (so another session may take them);
    /// returns the wait for their queues.
    private func release(_ session: CaptureSession) -> OutputFlush {
        let flush = session.stopRunningLater()
        session.beginConfiguration()
        for output in session.outputs { session.removeOutput(output) }
        try? session.commitConfiguration()
        return flush
    }

    // MARK: Notifications

    /// Calls `handler` with each camera's notifications, tagged with its device.
    @discardableResult
    public func addObserver(_ handler: @escaping @Sendable (CaptureDevice, SessionNotification) -> Void) -> CaptureSession.ObserverToken {
        state.withLock { s in
            s.nextObserver += 1
            s.observers[s.nextObserver] = handler
            return CaptureSession.ObserverToken(id: s.nextObserver)
        }
    }

    public func removeObserver(_ token: CaptureSession.ObserverToken) {
        _ = state.withLock { $0.observers.removeValue(forKey: token.id) }
    }

    private func post(_ device: CaptureDevice, _ notification: SessionNotification) {
        for handler in state.withLock({ Array($0.observers.values) }) { handler(device, notification) }
    }
}
