import Foundation
import FrameCapture
import FrameCore
import FrameMedia
import FrameProcessors
import Synchronization

/// Benchmarks a processor chain on files, as `framekit bench` does the detect pipeline: every
/// input read as fast as the chain goes, several rounds interleaved, each run's speed taken as a
/// ratio to ``BenchmarkReference`` timed just before it in the same process (so a slower or
/// busier machine moves both), its noise from the rounds' spread; recall and precision where an
/// input has truth, from one more run after the timed rounds. Compare the results with a saved
/// ``BenchmarkBaseline``.
///
/// ```swift
/// let benchmark = Benchmark(inputs: [.init(file: clip, truth: try FaceTruth.read("clip.truth.jsonl"))]) {
///     let tracker = try FaceTracker(detector: try FaceDetector())
///     return ProcessorChain([FaceTrackingProcessor(tracker: tracker), MyStage()])
/// }
/// let results = try benchmark.run()
/// let verdicts = try BenchmarkBaseline.read("baseline.json").compare(results, tolerance: 1.25, cpus: CPUAllowance.current.count)
/// ```
public struct Benchmark: Sendable {
    public struct Input: Sendable {
        /// How the input is named in results and baselines (default: the path as given).
        public var name: String
        public var file: URL
        /// Its true faces: the chain's `frame.faces` are scored against them.
        public var truth: FaceTruth?
        public init(file: URL, name: String? = nil, truth: FaceTruth? = nil) {
            self.file = file
            self.name = name ?? file.relativePath
            self.truth = truth
        }
    }

    public var inputs: [Input]
    public var rounds: Int
    /// At most this many frames of each input a run (nil: all).
    public var frameLimit: Int?
    /// The session preset (files: `.high`, their own size up to 1920x1080).
    public var preset: SessionPreset
    /// A chain for each run (a tracker starts each run afresh).
    public var makeChain: @Sendable () throws -> ProcessorChain

    public init(
        inputs: [Input], rounds: Int = 3, frameLimit: Int? = nil, preset: SessionPreset = .high,
        chain: @escaping @Sendable () throws -> ProcessorChain
    ) {
        self.inputs = inputs
        self.rounds = max(1, rounds)
        self.frameLimit = frameLimit
        self.preset = preset
        self.makeChain = chain
    }

    /// Every round over every input, then the scoring runs; throws ``BenchmarkError/runFailed(input:reason:)``
    /// naming the input whose file could not be read or whose chain threw on every frame.
    public func run() throws(BenchmarkError) -> [BenchmarkResult] {
        var results = inputs.map { BenchmarkResult(name: $0.name) }
        for _ in 0..<rounds {
            for (index, input) in inputs.enumerated() {
                let reference = BenchmarkReference.measure()
                let before = CPUBudget.processCPUTime()
                let started = ContinuousClock.now
                let run = try Self.runOnce(input, preset: preset, frameLimit: frameLimit, chain: makeChain)
                let wall = (ContinuousClock.now - started) / .seconds(1)
                let cpu = (CPUBudget.processCPUTime() - before) / .seconds(1)
                results[index].rounds.append(
                    BenchmarkRound(
                        framesCaptured: run.counts.captured, framesDelivered: run.counts.delivered, wallSeconds: wall, cpuSeconds: cpu,
                        referenceRate: reference))
            }
        }
        for (index, input) in inputs.enumerated() {
            guard let truth = input.truth else { continue }
            let run = try Self.runOnce(input, preset: preset, frameLimit: frameLimit, chain: makeChain)
            results[index].accuracy = truth.score(run.faces)
        }
        return results
    }

    /// One run of `input` through a fresh chain: its output's counts and the faces of each frame.
    static func runOnce(_ input: Input, preset: SessionPreset, frameLimit: Int?, chain: () throws -> ProcessorChain) throws(BenchmarkError)
        -> (counts: OutputCounts, faces: [Int: [Rect]])
    {
        do {
            let device = try CaptureDevice.file(input.file)
            let session = CaptureSession()
            let output = VideoDataOutput()
            output.processors = try chain()
            let collector = RunCollector(frameLimit: frameLimit)
            output.setSampleBufferDelegate(collector)
            try session.configure {
                try session.addInput(CaptureDeviceInput(device: device))
                try session.setSessionPreset(preset)
                try session.addOutput(output)
            }
            let observer = session.addObserver { collector.notify($0) }
            defer { session.removeObserver(observer) }
            try session.startRunning()
            let failure = collector.waitForEnd()
            session.stopRunning()
            if let failure { throw BenchmarkError.runFailed(input: input.name, reason: failure) }
            return (output.counts, collector.faces)
        } catch let error as BenchmarkError {
            throw error
        } catch {
            throw .runFailed(input: input.name, reason: "\(error)")
        }
    }
}

/// A run's delegate: counts frames, keeps each frame's faces, and says when the run ended (the
/// file's end, the frame limit, a runtime error).
final class RunCollector: VideoDataOutputSampleBufferDelegate, Sendable {
    private struct State {
        var faces: [Int: [Rect]] = [:]
        var seen = 0
        var ended = false
        var failure: String?
    }
    private let state = Mutex(State())
    private let end = DispatchSemaphore(value: 0)
    private let frameLimit: Int?

    init(frameLimit: Int?) { self.frameLimit = frameLimit }

    var faces: [Int: [Rect]] { state.withLock { $0.faces } }

    func captureOutput(_ output: VideoDataOutput, didOutput sampleBuffer: SampleBuffer, from connection: CaptureConnection) {
        let reached = state.withLock { s -> Bool in
            s.faces[Int(sampleBuffer.sequenceNumber)] = sampleBuffer.faces.map(\.bounds)
            s.seen += 1
            return frameLimit.map { s.seen >= $0 } ?? false
        }
        if reached { finish(nil) }
    }

    func captureOutput(_ output: VideoDataOutput, didDrop frame: DroppedFrame, from connection: CaptureConnection) {
        let reached = state.withLock { s -> Bool in
            s.seen += 1
            return frameLimit.map { s.seen >= $0 } ?? false
        }
        if reached { finish(nil) }
    }

    func notify(_ notification: SessionNotification) {
        switch notification {
        case .sourceEnded: finish(nil)
        case .runtimeError(let error): finish("\(error)")
        case .wasInterrupted(let reason): finish("capture interrupted: \(reason.rawValue)")
        default: break
        }
    }

    private func finish(_ failure: String?) {
        let first = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            s.ended = true
            s.failure = failure
            return true
        }
        if first { end.signal() }
    }

    /// Waits for the run's end; its failure, if it failed.
    func waitForEnd() -> String? {
        end.wait()
        return state.withLock { $0.failure }
    }
}
