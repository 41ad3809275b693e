import Dispatch
import Foundation
import FrameCapture
import FrameCore
import FrameImageIO
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Receives the end of each recording.
public protocol RecordingDelegate: AnyObject, Sendable {
    /// The recording ended: by ``MovieFileOutput/stopRecording()``, by a limit, or by a failure
    /// (then `error` says which). With `frames` > 0 the file at `url` is complete and plays;
    /// with none there is no file (nothing came, or nothing fitted the size limit or the disk).
    func fileOutput(_ output: MovieFileOutput, didFinishRecordingTo url: URL, frames: Int, error: CaptureError?)
}

/// Records the session's video to a file (as AVCaptureMovieFileOutput), the container chosen
/// by the URL's extension: `.mp4` and `.mov` get H.264 (libx264 through libavcodec, in a
/// fragmented file that plays up to its last fragment even after a crash), `.avi` gets
/// Motion-JPEG (libjpeg-turbo).
///
/// Frames are encoded on the output's own queue; while it is busy, late frames are dropped
/// (counted in ``counts``), so recording never stalls capture.
public final class MovieFileOutput: CaptureOutput, FrameSink {
    /// The file being written; touched only under ``file`` (encoding and disk writes happen
    /// there, on the output's queue, never under ``state``).
    private struct Recording {
        let url: URL
        let writer: any MovieWriter
        let delegate: any RecordingDelegate
        var firstTime: Double?
        /// The last written frame's time from the first (seconds).
        var lastTime: Double?
        /// The frame size the file was opened for (its headers hold it).
        var size: FrameSize?
        /// Frames the writer has taken (an H.264 encoder holds some before they reach the file:
        /// its own count lags behind by its delay).
        var accepted = 0
    }
    private struct State {
        /// Whether a recording is under way: all the capture thread reads, under a short lock.
        var recording = false
        var frameRate = 30.0
        var maxDuration: Double?
        var maxFileSize: Int?
        var maxFrames: Int?
        var minFreeDisk: Int?
        var quality = 85
        var h264 = H264Settings()
        var beforeWrite: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    // The writers are not Sendable; they are used only under this lock.
    private let file = Mutex<Recording?>(nil)
    private let frames = VideoDataOutput()
    /// Where frames are encoded and every ``RecordingDelegate`` call is made.
    private let queue = DispatchQueue(label: "framekit.movie-file-output", qos: .userInitiated)

    public init() {
        frames.setSampleBufferDelegate(FrameWriter(owner: self), queue: queue)
    }

    /// Stop when the recording is this long (seconds of media time).
    public var maxRecordedDuration: Double? {
        get { state.withLock { $0.maxDuration } }
        set { state.withLock { $0.maxDuration = newValue } }
    }
    /// Stop before the file grows beyond this many bytes (no container bound: `.avi` is
    /// OpenDML past 1 GiB, `.mp4`/`.mov` use 64-bit offsets). A limit below the headers and the
    /// first frame (an empty `.avi` is 5.7 KB, `.mp4` under 1 KB) records nothing and leaves no file.
    public var maxRecordedFileSize: Int? {
        get { state.withLock { $0.maxFileSize } }
        set { state.withLock { $0.maxFileSize = newValue } }
    }
    /// Stop when this many frames are written: the file holds exactly that many (checked as each
    /// is written, not by a caller watching a counter, which let a few more in).
    public var maxRecordedFrameCount: Int? {
        get { state.withLock { $0.maxFrames } }
        set { state.withLock { $0.maxFrames = newValue } }
    }
    /// Stop when the volume has less than this many bytes free.
    public var minFreeDiskSpaceLimit: Int? {
        get { state.withLock { $0.minFreeDisk } }
        set { state.withLock { $0.minFreeDisk = newValue } }
    }
    /// JPEG quality of an `.avi` recording's frames, 1…100 (set with ``setQuality(_:)``).
    public var quality: Int { state.withLock { $0.quality } }

    /// Sets the frames' JPEG quality; outside 1…100 is `CaptureError.invalidArgument`.
    public func setQuality(_ quality: Int) throws(CaptureError) {
        guard (1...100).contains(quality) else { throw .invalidArgument("JPEG quality must be 1…100, got \(quality)") }
        state.withLock { $0.quality = quality }
    }

    public var isRecording: Bool { state.withLock { $0.recording } }

    /// Called on the output's queue before each frame is written: tests play a disk that blocks.
    package var beforeWrite: (@Sendable () -> Void)? {
        get { state.withLock { $0.beforeWrite } }
        set { state.withLock { $0.beforeWrite = newValue } }
    }
    /// Frames received, written and dropped while recording.
    public var counts: OutputCounts { frames.counts }

    /// Starts recording the next frames to `url`: `.mp4`/`.mov` as H.264 (``h264Settings``),
    /// `.avi` as Motion-JPEG (``quality``). Throws if a recording is under way, if `url` has
    /// another extension, if `url` exists (FrameKit never overwrites) or its folder does not.
    public func startRecording(to url: URL, recordingDelegate: any RecordingDelegate) throws(CaptureError) {
        guard let container = MovieFile.Container(url: url) else {
            throw .invalidArgument("\(url.lastPathComponent): MovieFileOutput writes .mp4 and .mov (H.264) or .avi (Motion-JPEG)")
        }
        let (quality, h264) = state.withLock { ($0.quality, $0.h264) }
        try file.withLock { (f) throws(CaptureError) in
            guard f == nil else { throw .recordingInProgress }
            // The file is created now (so a name taken meanwhile fails here); the headers follow
            // with the first frame, whose size they record.
            let fd = try MovieFile.reserve(url)
            let writer: any MovieWriter
            switch container {
            case .avi:
                do { writer = try MJPEGMovieWriter(path: url.path, fileDescriptor: fd, quality: quality) } catch {
                    _ = Glibc.close(fd)
                    throw .encodingFailed("\(error)")
                }
            case .mp4, .mov:
                writer = H264MovieWriter(path: url.path, fileDescriptor: fd, container: container, settings: h264)
            }
            f = Recording(url: url, writer: writer, delegate: recordingDelegate)
            state.withLock { $0.recording = true }
        }
    }

    /// H.264 encoding for `.mp4` and `.mov` recordings (libx264's settings).
    public struct H264Settings: Sendable, Equatable {
        /// libx264's preset: "ultrafast" … "veryslow" (faster: bigger files, less CPU).
        public var preset: String = "veryfast"
        /// Constant rate factor, 0…51: lower is better quality and bigger files (18 looks lossless).
        public var crf: Int = 23
        /// Seconds between key frames: each starts a fragment, the most a crash can lose.
        public var keyframeInterval: Double = 2
        public init() {}
    }

    /// The H.264 settings for the next `.mp4`/`.mov` recording.
    public var h264Settings: H264Settings { state.withLock { $0.h264 } }

    /// Sets ``h264Settings``; a preset libx264 does not have is found when recording starts
    /// (the delegate gets the error), a CRF outside 0…51 or a non-positive key-frame interval
    /// is `CaptureError.invalidArgument` now.
    public func setH264Settings(_ settings: H264Settings) throws(CaptureError) {
        guard (0...51).contains(settings.crf) else { throw .invalidArgument("CRF must be 0…51, got \(settings.crf)") }
        guard settings.keyframeInterval > 0, settings.keyframeInterval.isFinite else {
            throw .invalidArgument("the key-frame interval must be a positive number of seconds, got \(settings.keyframeInterval)")
        }
        let presets = ["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower", "veryslow", "placebo"]
        guard presets.contains(settings.preset) else {
            throw .invalidArgument("unknown x264 preset '\(settings.preset)'; one of \(presets.joined(separator: ", "))")
        }
        state.withLock { $0.h264 = settings }
    }

    /// Ends the recording. When it returns the file is complete (closed and indexed); the
    /// delegate is then told on the output's queue, as it is when a limit or the session's end
    /// finishes a recording.
    public func stopRecording() { finishRecording(error: nil) }

    private func finishRecording(error: CaptureError?) {
        state.withLock { $0.recording = false }
        // Waits for a frame being written, so the file is closed after it.
        let done = file.withLock { f -> Recording? in
            defer { f = nil }
            return f
        }
        guard let done else { return }
        var failure = error
        do { try done.writer.close() } catch { failure = failure ?? .cannotWrite(path: done.url.path, reason: "\(error)") }
        // Ended before its headers (no frame came, or the disk had no room for them), or before
        // its first frame (a size limit below the headers and one frame; a full disk before the
        // first fragment): not a movie. Complete or absent.
        let frameCount = done.writer.frameCount
        if !done.writer.isPrepared || frameCount == 0 { try? FileManager.default.removeItem(at: done.url) }
        let url = done.url
        let delegate = done.delegate
        let result = failure
        queue.async { delegate.fileOutput(self, didFinishRecordingTo: url, frames: frameCount, error: result) }
    }

    /// Called on the output's queue for each frame to record.
    fileprivate func write(_ frame: SampleBuffer) {
        let settings = state.withLock { $0 }
        guard settings.recording else { return }
        let limit: CaptureError? = file.withLock { f in
            guard var r = f else { return nil }
            defer { f = r }
            do {
                // A file holds one frame size: a session whose size changes (a preset, a camera
                // switched) ends the recording, complete up to the last frame of the old size,
                // as AVFoundation's does. Another pixel format of the same size is converted.
                let size = FrameSize(width: frame.pixelBuffer.width, height: frame.pixelBuffer.height)
                if let recorded = r.size, recorded != size {
                    return .sessionConfigurationChanged("the frames changed size from \(recorded) to \(size) while recording")
                }
                try r.writer.prepare(width: size.width, height: size.height, frameRate: settings.frameRate)
                r.size = size
                var first = r.firstTime ?? frame.presentationTime
                // A source whose clock started again (a reconfiguration: another camera, another
                // rate) continues the recording's time, one frame after its last, instead of
                // going back over it (frames were crammed after the last, and the duration limit
                // waited for the new clock to reach it).
                // (A step back of under half a frame is a driver's jitter: the writers move that
                // frame just after the last instead.)
                if let last = r.lastTime, frame.presentationTime - first < last - 0.5 / settings.frameRate {
                    first = frame.presentationTime - (last + 1 / settings.frameRate)
                }
                r.firstTime = first
                if let max = settings.maxDuration, frame.presentationTime - first >= max {
                    // The file must last `max` seconds however many frames before this one were
                    // dropped: after a gap, this frame — the scene as the limit passed — closes
                    // it, shown for the last frame time (its time moved back by the gap; a 3 s
                    // 1080p recording on a busy machine lasted 2.87 s).
                    let end = max - 1 / settings.frameRate
                    if let last = r.lastTime, last < end - 0.5 / settings.frameRate {
                        _ = try r.writer.write(frame.pixelBuffer, at: end, maxBytes: settings.maxFileSize)
                        r.lastTime = end
                    }
                    return .maximumDurationReached(seconds: max)
                }
                if let minFree = settings.minFreeDisk, Self.freeBytes(at: r.url) < minFree {
                    return .freeDiskSpaceBelowLimit(bytes: minFree)
                }
                settings.beforeWrite?()
                let limit = min(settings.maxFileSize ?? Int.max, r.writer.maximumBytes)
                let time = frame.presentationTime - first
                guard try r.writer.write(frame.pixelBuffer, at: time, maxBytes: limit == Int.max ? nil : limit) else {
                    return .maximumFileSizeReached(bytes: limit)
                }
                r.lastTime = time
                r.accepted += 1
                if let max = settings.maxFrames, r.accepted >= max { return .maximumFrameCountReached(frames: max) }
                return nil
            } catch {
                return .cannotWrite(path: r.url.path, reason: "\(error)")
            }
        }
        if let limit { finishRecording(error: limit) }
    }

    static func freeBytes(at url: URL) -> Int {
        let folder = url.deletingLastPathComponent().path
        let attributes = try? FileManager.default.attributesOfFileSystem(forPath: folder)
        return (attributes?[.systemFreeSize] as? NSNumber)?.intValue ?? Int.max
    }

    // MARK: FrameSink (through the inner VideoDataOutput, which drops late frames)

    package var preferredPixelFormat: PixelFormat? { nil }
    package var isReadyForMoreFrames: Bool { frames.isReadyForMoreFrames }
    package var readiness: DispatchSemaphore { frames.readiness }
    package func attach(nativeFormat: PixelFormat, capacity: Int, frameRate: Double) {
        state.withLock { $0.frameRate = frameRate }
        frames.attach(nativeFormat: nativeFormat, capacity: capacity, frameRate: frameRate)
    }
    package func receive(_ frame: SampleBuffer) { if isRecording { frames.receive(frame) } }
    package func receive(drop: DroppedFrame) { if isRecording { frames.receive(drop: drop) } }
    package func finish() -> OutputFlush {
        // The file closes after its queued frames are written.
        frames.finish().followed(by: OutputFlush(after: queue, then: { [self] in finishRecording(error: .sessionStopped) }))
    }
}

private final class FrameWriter: VideoDataOutputSampleBufferDelegate {
    weak let owner: MovieFileOutput?
    init(owner: MovieFileOutput) { self.owner = owner }
    func captureOutput(_ output: VideoDataOutput, didOutput frame: SampleBuffer, from connection: CaptureConnection) {
        owner?.write(frame)
    }
}

extension MovieFileOutput {
    public var sessionEndpoint: CaptureOutputEndpoint { CaptureOutputEndpoint(self) }
}
