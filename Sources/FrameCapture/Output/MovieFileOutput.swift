import Dispatch
import Foundation
import FrameCore
import FrameImageIO
import Synchronization

/// Receives the end of each recording.
public protocol RecordingDelegate: AnyObject, Sendable {
    /// The recording ended: by ``MovieFileOutput/stopRecording()``, by a limit, or by a failure
    /// (then `error` says which). The file at `url` is a valid AVI in every case.
    func fileOutput(_ output: MovieFileOutput, didFinishRecordingTo url: URL, frames: Int, error: CaptureError?)
}

/// Records the session's video to a Motion-JPEG AVI file (as AVCaptureMovieFileOutput).
///
/// Frames are encoded on the output's own queue; while it is busy, late frames are dropped
/// (counted in ``counts``), so recording never stalls capture.
public final class MovieFileOutput: CaptureOutput, FrameSink {
    private struct Recording {
        var url: URL
        var writer: AVIWriter
        var delegate: any RecordingDelegate
        var firstTime: Double?
    }
    private struct State {
        var recording: Recording?
        var frameRate = 30.0
        var maxDuration: Double?
        var maxFileSize: Int?
        var minFreeDisk: Int?
        var quality = 85
    }
    // The AVI writer is used only on the frames' delegate queue, under this lock.
    private let state = Mutex(SendableBox(State()))
    private let frames = VideoDataOutput()
    private let encoder = Mutex(SendableBox<JPEG.Encoder?>(nil))

    public init() {
        frames.setSampleBufferDelegate(FrameWriter(owner: self), queue: DispatchQueue(label: "framekit.movie-file-output", qos: .userInitiated))
    }

    /// Stop when the recording is this long (seconds of media time).
    public var maxRecordedDuration: Double? {
        get { state.withLock { $0.value.maxDuration } }
        set { state.withLock { $0.value.maxDuration = newValue } }
    }
    /// Stop before the file grows beyond this many bytes.
    public var maxRecordedFileSize: Int? {
        get { state.withLock { $0.value.maxFileSize } }
        set { state.withLock { $0.value.maxFileSize = newValue } }
    }
    /// Stop when the volume has less than this many bytes free.
    public var minFreeDiskSpaceLimit: Int? {
        get { state.withLock { $0.value.minFreeDisk } }
        set { state.withLock { $0.value.minFreeDisk = newValue } }
    }
    /// JPEG quality of the frames, 1…100 (set with ``setQuality(_:)``).
    public var quality: Int { state.withLock { $0.value.quality } }

    /// Sets the frames' JPEG quality; outside 1…100 is ``CaptureError/invalidArgument(_:)``.
    public func setQuality(_ quality: Int) throws(CaptureError) {
        guard (1...100).contains(quality) else { throw .invalidArgument("JPEG quality must be 1…100, got \(quality)") }
        state.withLock { $0.value.quality = quality }
    }

    public var isRecording: Bool { state.withLock { $0.value.recording != nil } }
    /// Frames received, written and dropped while recording.
    public var counts: OutputCounts { frames.counts }

    /// Starts recording the next frames to `url` (an AVI). Throws if a recording is under way
    /// or `url` exists (FrameKit never overwrites).
    public func startRecording(to url: URL, recordingDelegate: any RecordingDelegate) throws(CaptureError) {
        try state.withLock { (s) throws(CaptureError) in
            guard s.value.recording == nil else { throw .configuration("a recording is already under way") }
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw .configuration("\(url.path) exists; FrameKit does not overwrite recordings")
            }
            s.value.recording = Recording(url: url, writer: try Self.reserveFile(url), delegate: recordingDelegate)
        }
    }

    // Creates the file now (so a name taken meanwhile fails here); the headers follow with the
    // first frame, whose size they record.
    private static func reserveFile(_ url: URL) throws(CaptureError) -> AVIWriter {
        do { return try AVIWriter(deferredAt: url) } catch { throw .configuration("cannot create \(url.path): \(error)") }
    }

    /// Ends the recording; the delegate is told once the file is complete.
    public func stopRecording() { finishRecording(error: nil) }

    func finishRecording(error: CaptureError?) {
        let done = state.withLock { s -> Recording? in
            defer { s.value.recording = nil }
            return s.value.recording
        }
        guard let done else { return }
        var failure = error
        do { try done.writer.close() } catch { failure = failure ?? .configuration("cannot finish \(done.url.path): \(error)") }
        done.delegate.fileOutput(self, didFinishRecordingTo: done.url, frames: done.writer.frameCount, error: failure)
    }

    /// Called on the frames' queue for each frame to record.
    fileprivate func write(_ frame: SampleBuffer) {
        var limit: CaptureError?
        state.withLock { s in
            guard var r = s.value.recording else { return }
            do {
                if !r.writer.isOpen {
                    try r.writer.open(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height, frameRate: s.value.frameRate)
                }
                let first = r.firstTime ?? frame.presentationTime
                r.firstTime = first
                if let max = s.value.maxDuration, frame.presentationTime - first >= max {
                    limit = .configuration("maximum recorded duration (\(max) s) reached")
                } else if let minFree = s.value.minFreeDisk, Self.freeBytes(at: r.url) < minFree {
                    limit = .configuration("free disk space below the limit (\(minFree) bytes)")
                } else {
                    let jpeg = try encoder.withLock { box in
                        if box.value == nil { box.value = try JPEG.Encoder() }
                        return try box.value!.encode(frame.pixelBuffer, quality: s.value.quality)
                    }
                    if let max = s.value.maxFileSize, r.writer.bytesWritten + jpeg.count + 8 + 16 * (r.writer.frameCount + 1) + 8 > max {
                        limit = .configuration("maximum recorded file size (\(max) bytes) reached")
                    } else {
                        try r.writer.append(jpeg: jpeg)
                    }
                }
            } catch {
                limit = .configuration("recording failed: \(error)")
            }
            s.value.recording = r
        }
        if let limit { finishRecording(error: limit) }
    }

    static func freeBytes(at url: URL) -> Int {
        let folder = url.deletingLastPathComponent().path
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: folder)
        return (attributes?[.systemFreeSize] as? NSNumber)?.intValue ?? Int.max
    }

    // MARK: FrameSink (through the inner VideoDataOutput, which drops late frames)

    var preferredPixelFormat: PixelFormat? { nil }
    var isReadyForMoreFrames: Bool { frames.isReadyForMoreFrames }
    var readiness: DispatchSemaphore { frames.readiness }
    func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) {
        state.withLock { $0.value.frameRate = frameRate }
        frames.attach(nativeFormat: nativeFormat, capacity: capacity, frameRate: frameRate)
    }
    func receive(_ frame: SampleBuffer) { if isRecording { frames.receive(frame) } }
    func receive(drop: DroppedFrame) { if isRecording { frames.receive(drop: drop) } }
    func finish() {
        frames.finish()
        finishRecording(error: .configuration("the session stopped"))
    }
}

private final class FrameWriter: VideoDataOutputSampleBufferDelegate {
    weak let owner: MovieFileOutput?
    init(owner: MovieFileOutput) { self.owner = owner }
    func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        owner?.write(frame)
    }
}
