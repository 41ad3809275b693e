import Dispatch
import Foundation
import FrameKit
import Synchronization

/// Session helpers shared by the test targets: a recording delegate, a notification log, sessions
/// made in one commit, and a recording's end.

/// A delegate that records what it is given, optionally slowly or holding on to buffers.
public final class Recorder: VideoDataOutputSampleBufferDelegate {
    public struct Record {
        public var frames: [SampleBuffer] = []
        public var drops: [DroppedFrame] = []
        public var latencies: [Double] = []
        public var held: [SampleBuffer] = []
        public var busyCallbacks = 0
        public var inCallback = false
    }

    public let record = Mutex(Record())
    public let delay: Double
    public let holdFirst: Int
    private let keepPixels: Bool
    private let keepPixelsOfFirst: Int

    /// - Parameters:
    ///   - delay: seconds each didOutput takes
    ///   - holdFirst: keep this many delivered buffers alive (starving the source)
    ///   - keepPixels: keep copies of frames (the borrowed buffers go back at once)
    ///   - keepPixelsOfFirst: keep copies of this many first frames only
    public init(delay: Double = 0, holdFirst: Int = 0, keepPixels: Bool = false, keepPixelsOfFirst: Int = 0) {
        self.delay = delay
        self.holdFirst = holdFirst
        self.keepPixels = keepPixels
        self.keepPixelsOfFirst = keepPixelsOfFirst
    }

    public func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        let latency = Timestamp.now().seconds(since: frame.captureInstant)
        record.withLock { r in
            if r.inCallback { r.busyCallbacks += 1 }
            r.inCallback = true
            if r.held.count < holdFirst { r.held.append(frame) }
            var kept = frame
            if keepPixels || r.frames.count < keepPixelsOfFirst {
                kept.pixelBuffer = frame.pixelBuffer.copy()
            } else {
                kept.pixelBuffer = (try? PixelBuffer(width: 2, height: 2, format: .gray8)) ?? frame.pixelBuffer
            }
            r.frames.append(kept)
            r.latencies.append(latency)
        }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        record.withLock { $0.inCallback = false }
    }

    public func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
        record.withLock { $0.drops.append(frame) }
    }

    public var frames: [SampleBuffer] { record.withLock { $0.frames } }
    public var drops: [DroppedFrame] { record.withLock { $0.drops } }
    public var latencies: [Double] { record.withLock { $0.latencies } }
    public func releaseHeld() { record.withLock { $0.held.removeAll() } }
    public func drops(_ reason: DropReason) -> Int { drops.filter { $0.reason == reason }.count }

    /// Waits until `condition` holds or `timeout` passes; returns whether it held.
    @discardableResult
    public func wait(timeout: Double = 5, _ condition: (Recorder) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(self) { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return condition(self)
    }
}

/// Collects a session's notifications.
public final class NotificationLog: Sendable {
    private let log = Mutex<[SessionNotification]>([])
    public init(_ session: CaptureSession) { session.addObserver { n in self.append(n) } }
    private func append(_ n: SessionNotification) { log.withLock { $0.append(n) } }
    public var all: [SessionNotification] { log.withLock { $0 } }
    public func wait(timeout: Double = 5, _ match: (SessionNotification) -> Bool) -> SessionNotification? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let hit = all.first(where: match) { return hit }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return all.first(where: match)
    }
}

/// A running session on `device` with one output and `recorder` as its delegate.
public func makeSession(
    _ device: CaptureDevice, preset: SessionPreset = .vga640x480, recorder: some VideoDataOutputSampleBufferDelegate,
    format: PixelFormat? = nil, discardsLate: Bool = true
) throws -> (CaptureSession, VideoDataOutput) {
    let session = CaptureSession()
    let output = VideoDataOutput()
    output.videoSettings = .init(pixelFormat: format)
    output.alwaysDiscardsLateVideoFrames = discardsLate
    output.setSampleBufferDelegate(recorder)
    try session.configure {
        try session.addInput(CaptureDeviceInput(device: device))
        try session.setSessionPreset(preset)
        try session.addOutput(output)
    }
    return (session, output)
}

/// A multi-camera session (not started) at `preset`: each device connected to an output of its
/// own, whose delegate is the delegate at the same index.
public func makeMultiCamSession(
    _ devices: [CaptureDevice], delegates: [any VideoDataOutputSampleBufferDelegate], preset: SessionPreset = .vga640x480
) throws -> (MultiCamSession, [CaptureDeviceInput], [VideoDataOutput]) {
    precondition(devices.count == delegates.count, "a delegate per device")
    let session = MultiCamSession()
    let inputs = try devices.map { try CaptureDeviceInput(device: $0) }
    let outputs = delegates.map { delegate in
        let output = VideoDataOutput()
        output.setSampleBufferDelegate(delegate)
        return output
    }
    try session.configure {
        try session.setSessionPreset(preset)
        for (input, output) in zip(inputs, outputs) {
            try session.addInputWithNoConnections(input)
            try session.addOutputWithNoConnections(output)
            try session.addConnection(from: input, to: output)
        }
    }
    return (session, inputs, outputs)
}

/// The CaptureError `body` throws (nil if it throws nothing or something else).
public func thrownCaptureError(_ body: () throws -> Void) -> CaptureError? {
    do {
        try body()
        return nil
    } catch {
        return error as? CaptureError
    }
}

/// A session on the virtual camera at `preset` with `outputs`, configured in one commit.
public func virtualSession(preset: SessionPreset = .cif352x288, outputs: [any CaptureOutput]) throws -> CaptureSession {
    try session(try CaptureDeviceInput(device: .virtualCamera), preset: preset, outputs: outputs)
}

/// A session on `input` at `preset` with `outputs`, configured in one commit.
public func session(_ input: CaptureDeviceInput, preset: SessionPreset, outputs: [any CaptureOutput]) throws -> CaptureSession {
    let session = CaptureSession()
    try session.configure {
        try session.addInput(input)
        try session.setSessionPreset(preset)
        for output in outputs { try session.addOutput(output) }
    }
    return session
}

/// The end of a recording; ``wait()`` returns as soon as the delegate is called (recordings
/// here run seconds in real time, then libx264 flushes: a deadline only as a last resort).
public final class RecordingWaiter: RecordingDelegate {
    public let result = Mutex<(URL, Int, CaptureError?)?>(nil)
    private let finished = DispatchSemaphore(value: 0)
    public init() {}
    public func fileOutput(_ output: MovieFileOutput, didFinishRecordingTo url: URL, frames: Int, error: CaptureError?) {
        result.withLock { $0 = (url, frames, error) }
        finished.signal()
    }
    public func wait(timeout: Double = 60) -> (URL, Int, CaptureError?)? {
        if result.withLock({ $0 }) == nil { _ = finished.wait(timeout: .now() + timeout) }
        return result.withLock { $0 }
    }
}
