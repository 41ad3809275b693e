import Dispatch
import Foundation
import FrameCore
import Synchronization

/// One run of capture: a source on its own thread feeding the session's outputs.
final class CapturePipeline: Sendable {
    /// Driver/pool buffers per source: enough for one frame being filled, one in the output's
    /// slot, one with the consumer, one spare.
    static let bufferCount = 4

    let outputs: [any FrameSink]
    // The source is used by the thread that builds the pipeline, then by the capture thread,
    // which holds this lock for the whole run (no one else takes it: usage has its own closure).
    private let source: Mutex<any FrameSource>
    private let usage: @Sendable () -> BufferPool.Usage
    private let control = Mutex((stopRequested: false, running: false, nextSequence: UInt64(0)))
    /// Added to the source's sequence numbers: a pipeline rebuilt while the session runs (a
    /// camera switch) continues its predecessor's numbering.
    private let sequenceOffset: UInt64
    private let finished = DispatchSemaphore(value: 0)
    private let onEnd: @Sendable (SessionNotification) -> Void
    private let onNotice: @Sendable (SessionNotification) -> Void
    private let interrupt: (@Sendable () -> Void)?
    private let device: CaptureDevice
    private let configuration: SourceConfiguration

    var isRunning: Bool { control.withLock { $0.running } }
    func bufferUsage() -> BufferPool.Usage { usage() }

    /// The number the next frame would have had: where a successor pipeline continues.
    var nextSequence: UInt64 { control.withLock { $0.nextSequence } }

    init(
        input: CaptureDeviceInput, outputs: [any FrameSink], preset: SessionPreset, sequenceOffset: UInt64 = 0,
        onNotice: @escaping @Sendable (SessionNotification) -> Void = { _ in },
        onEnd: @escaping @Sendable (SessionNotification) -> Void
    ) throws(CaptureError) {
        self.sequenceOffset = sequenceOffset
        let device = input.device
        self.device = device
        let preferred = outputs.lazy.compactMap(\.preferredPixelFormat).first
        let configuration = try Self.configure(device: device, preset: preset, preferred: preferred)
        for output in outputs { try output.validate(nativeFormat: configuration.pixelFormat) }
        let source = try device.source.makeSource(configuration: configuration)
        try source.start()
        self.configuration = configuration
        input.setActive(configuration.format, frameRate: configuration.frameRate)
        self.usage = source.usageReporter()
        self.interrupt = source.interrupter()
        self.onNotice = onNotice
        self.source = Mutex(source)
        self.outputs = outputs
        self.onEnd = onEnd
        for output in outputs {
            output.attach(nativeFormat: configuration.pixelFormat, capacity: configuration.bufferCount, frameRate: configuration.frameRate)
            output.attach(notices: onNotice)
        }
    }

    /// Chooses the device format, delivered pixel format and frame rate for `preset`.
    static func configure(device: CaptureDevice, preset: SessionPreset, preferred: PixelFormat?) throws(CaptureError) -> SourceConfiguration
    {
        let size: FrameSize
        if let chosen = device.activeFormat {
            // The device's own activeFormat wins over the preset (AVFoundation's inputPriority).
            size = chosen.size
        } else if device.hasFixedSize {
            // A file has one size; presets that name another size are refused.
            let own = device.formats[0].size
            if let fixed = preset.fixedSize, fixed != (own.width, own.height) {
                throw .unsupportedPreset(preset, device: device.localizedName, available: [own.description])
            }
            size = own
        } else {
            guard let resolved = preset.resolve(among: device.supportedSizes) else {
                throw .unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description))
            }
            size = resolved
        }
        let candidates = device.activeFormat.map { [$0] } ?? device.formats.filter { $0.size == size }
        // Native formats first (the preferred one above all), then compressed (decoded on
        // capture), then libv4l2's software-emulated ones.
        func rank(_ f: CaptureDeviceFormat) -> Int {
            var r = f.isEmulated ? 100 : 0
            if f.isCompressed { r += 10 }
            if let preferred, f.pixelFormat == preferred || (f.pixelFormat == .nv12VideoRange && preferred == .nv12FullRange) { r -= 5 }
            return r
        }
        guard let format = candidates.min(by: { rank($0) < rank($1) }) else {
            throw .unsupportedPreset(preset, device: device.localizedName, available: device.supportedSizes.map(\.description))
        }
        // JPEG is full-range Y'CbCr: decoded frames default to full-range NV12 (no range pass).
        let delivered = format.isCompressed ? (preferred ?? format.pixelFormat ?? .nv12FullRange) : format.pixelFormat!
        let rate: Double
        if let duration = device.activeVideoMinFrameDuration {
            let wanted = 1 / duration
            guard let match = format.frameRates.min(by: { abs($0 - wanted) < abs($1 - wanted) }),
                abs(match - wanted) <= max(0.01 * wanted, 0.01) || (format.frameRates.count == 1 && device.hasFixedSize)
            else {
                throw .unsupportedFrameRate(wanted, device: device.localizedName, available: format.frameRates)
            }
            rate = device.hasFixedSize ? wanted : match
        } else {
            rate = format.frameRates.contains(30) ? 30 : (format.frameRates.last ?? 30)
        }
        return SourceConfiguration(format: format, pixelFormat: delivered, frameRate: rate, bufferCount: bufferCount)
    }

    /// Starts the capture thread.
    func run() {
        control.withLock { $0.running = true }
        let thread = Thread { [self] in
            let ending = loop()
            guard let ending else {
                finished.signal()
                return
            }
            // Ended by itself: the outputs are flushed here, since nobody may call stop() — after
            // `finished` is signalled, so that a delegate that stops the session meanwhile (its
            // stop waits for this thread) runs while this thread waits for its queue.
            let flushes = outputs.map { $0.finish() }
            finished.signal()
            for flush in flushes { flush.wait() }
            onEnd(ending)
        }
        thread.name = "framekit.capture"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Asks the thread to stop, waits for it, and stops the outputs (only `finishing` of them
    /// when the session goes on with the others: their queued frames are delivered later, and
    /// their async consumers go on). Returns the outputs' flushes, for the caller to wait on
    /// once it holds no lock.
    func stop(finishing: [any FrameSink]? = nil) -> [OutputFlush] {
        let wasRunning = control.withLock { c -> Bool in
            c.stopRequested = true
            return c.running
        }
        interrupt?() // a source blocked in a network read returns now
        if wasRunning { finished.wait() }
        return (finishing ?? outputs).map { $0.finish() }
    }

    /// Runs the source until it is stopped (nil) or ends by itself (why).
    private func loop() -> SessionNotification? {
        source.withLock { loop($0) }
    }

    private func loop(_ source: any FrameSource) -> SessionNotification? {
        var ending: SessionNotification?
        reading: while !control.withLock({ $0.stopRequested }) {
            for case let photo as PhotoOutput in outputs {
                if let still = photo.pendingStill { photo.receiveStill(takeStill(still, from: source)) }
            }
            let event: SourceEvent
            do { event = try source.next() } catch {
                switch error {
                case .deviceLost: ending = .wasInterrupted(.videoDeviceNotAvailable)
                case .deviceBusy: ending = .wasInterrupted(.videoDeviceInUseByAnotherClient)
                default: ending = .runtimeError(error)
                }
                break
            }
            // A source that waits for its consumers reads its next frame while they are still at
            // work on the last, and hands it over (or its drop, in order) once they can take it:
            // its decoding runs beside their processing rather than between two frames (a 720p
            // JPEG is ~2.5 ms here; that is 10–25% more frames a second for `framekit detect
            // --input`). Reading further ahead bought no more: the passes that make a frame slow
            // already keep both cores busy. A drop holds no buffer and is handed on at once
            // (in order, behind what the outputs hold): a jump in the timestamps is up to 10,000
            // drops, and a wait for the consumers before each cost two thread switches a drop.
            if case .frame = event, !source.isRealTime, !waitForConsumers() { break reading }
            switch event {
            case .frame(var frame):
                frame.dequeueInstant = .now()
                frame.sequenceNumber &+= sequenceOffset
                control.withLock { $0.nextSequence = max($0.nextSequence, frame.sequenceNumber &+ 1) }
                for output in outputs { output.receive(frame) }
            case .dropped(var drop):
                drop.sequenceNumber &+= sequenceOffset
                control.withLock { $0.nextSequence = max($0.nextSequence, drop.sequenceNumber &+ 1) }
                for output in outputs { output.receive(drop: drop) }
            case .idle: continue
            case .notice(let notification): onNotice(notification)
            case .endOfStream: ending = .sourceEnded
            }
            if ending != nil { break }
        }
        // Ended (not stopped): the source is stopped once its consumers are done with its last
        // frame, as when it read only for consumers ready for more.
        if !source.isRealTime { _ = waitForConsumers() }
        source.stop()
        control.withLock { $0.running = false }
        return ending
    }

    /// A still for a photo between two video frames: the device's format at the size asked
    /// for (the video's own pixel format preferred, native before compressed), with the flash
    /// if asked and the device has one.
    private func takeStill(_ wanted: (size: FrameSize?, flash: CaptureDevice.FlashMode), from source: any FrameSource) -> Result<
        SampleBuffer, CaptureError
    > {
        if wanted.flash == .on && !device.supportedFlashModes.contains(.on) {
            return .failure(.unsupportedMode("flash mode on (supported: \(device.supportedFlashModes))", device: device.localizedName))
        }
        let size = wanted.size ?? configuration.format.size
        func rank(_ f: CaptureDeviceFormat) -> Int {
            (f.fourCC == configuration.format.fourCC ? 0 : 1) + (f.isCompressed ? 10 : 0) + (f.isEmulated ? 100 : 0)
        }
        guard let format = device.formats.filter({ $0.size == size }).min(by: { rank($0) < rank($1) }) else {
            return .failure(
                .invalidArgument(
                    "\(device.localizedName) takes photos at \(device.supportedMaxPhotoDimensions.map(\.description).joined(separator: ", ")), not \(size)"
                ))
        }
        do throws(CaptureError) {
            return .success(try source.captureStill(format: format, flash: wanted.flash == .on))
        } catch {
            return .failure(error)
        }
    }

    /// Sources that wait for their consumer: block until every output can take a frame (false:
    /// the session is stopping).
    private func waitForConsumers() -> Bool {
        for output in outputs {
            while !output.isReadyForMoreFrames {
                if control.withLock({ $0.stopRequested }) { return false }
                _ = output.readiness.wait(timeout: .now() + 0.05)
            }
        }
        return true
    }
}
