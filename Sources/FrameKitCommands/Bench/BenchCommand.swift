import Foundation
import FrameKit
import Synchronization

/// `framekit bench`: the detect pipeline on the user's own inputs, several rounds interleaved,
/// each speed taken as a ratio to a fixed reference workload timed in the same round (so a
/// slower or busier machine moves both), the noise of each figure from the rounds' spread; a
/// baseline saved, or compared with a gate that fails only beyond both the tolerance and the
/// noise (docs/ci.md).
enum BenchCommand: Command {
    static let name = "bench"
    static let stopsOnInterrupt = true
    static let abstract = "Benchmark the detect pipeline on your inputs; save a baseline or fail on a regression (CI)."
    static let usage =
        "framekit bench --input FILE [--truth FILE] [--input FILE [--truth FILE] ...] [--rounds N] [--frames N] [--save-baseline FILE | --compare FILE [--tolerance X]] [--json FILE] [--junit FILE] [--markdown FILE]"
    static let rounds = Option.integer("rounds", "N", 1...100, help: "Rounds over every input, interleaved (default 3).")
    static let frames = Option.integer("frames", "N", 1...100_000_000, help: "At most N frames of each input a round (default: all).")
    static let duration = Option.number(
        "duration", "SECONDS", 0.001...1e7, help: "At most this much of each input a round (its media timeline; a camera's wall clock).")
    static let saveBaseline = Option.text("save-baseline", "FILE.json", help: "Write the figures as a baseline to compare later runs with.")
    static let compare = Option.text(
        "compare", "FILE.json", help: "Compare with a saved baseline: exit 3 when an input got slower beyond --tolerance and the noise.")
    static let tolerance = Option.number(
        "tolerance", "X", 1.0...100,
        help: "How many times slower (relative to the reference workload) counts as a regression (default 1.25).")
    static let json = Option.text("json", "FILE.json", help: "Also write every figure, per input and round, as JSON.")
    static let junit = Option.text(
        "junit", "FILE.xml",
        help: "Also write the results as JUnit XML: a test case per input, a failure where --compare found a regression.")
    static let markdown = Option.text("markdown", "FILE.md", help: "Also write the results as a Markdown table (a CI job summary).")
    static let truth = Option.repeatable(
        "truth", "FILE",
        help:
            "The true faces of an --input, for recall and precision (one --truth per --input, in the same order; JSON lines {\"frame\": N, \"faces\": [[x, y, w, h], ...]}, or COCO JSON: docs/ci.md). Scored on a run after the timed rounds."
    )
    static let maxQualityDrop = Option.number(
        "max-quality-drop", "X", 0...1,
        help:
            "With --compare and --truth: how far recall or precision may fall below the baseline's before it is a regression (default 0.02)."
    )
    /// Bench's own help for `--input` (the same option as detect's, read by DeviceChoice): files
    /// only, run one after another.
    static let input = Option.repeatable(
        "input", "FILE|DIR",
        help:
            "An input to measure: a video file, a photo or a folder of photos, read as fast as the pipeline goes. Repeat for several; a round runs them one after another. Required."
    )
    static let specs =
        [input.spec, DetectCommand.preset.spec]
        + [truth.spec, rounds.spec, frames.spec, duration.spec, saveBaseline.spec, compare.spec, tolerance.spec, maxQualityDrop.spec]
        + [json.spec, junit.spec, markdown.spec]
        + DetectorSettings.specs

    /// The exit status of a regression found by `--compare`: distinct from failures (1) and
    /// usage errors (64), so a CI job can tell "slower" from "broken".
    static let regressionExit: Int32 = 3

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit bench")
        if options.has(tolerance.spec) && !options.has(compare.spec) { throw UsageError("--tolerance applies to --compare") }
        if options.has(saveBaseline.spec) && options.has(compare.spec) { throw UsageError("give --save-baseline or --compare, not both") }
        // Speeds only a file shows: a camera, a stream or --realtime runs at its source's rate,
        // which a faster machine cannot beat and a slower pipeline may still keep up with.
        guard !options.all(input).isEmpty else { throw UsageError("--input FILE is required (a video file, a photo or a folder)") }
        if options.has(maxQualityDrop.spec) && !options.has(compare.spec) { throw UsageError("--max-quality-drop applies to --compare") }
        let truthFiles = options.all(truth)
        if !truthFiles.isEmpty && truthFiles.count != options.all(input).count {
            throw UsageError(
                "--truth is given \(truthFiles.count) time(s) for \(options.all(input).count) --input(s): one --truth per --input, in the same order"
            )
        }
        let baseline: BenchmarkBaseline?
        let truths: [FaceTruth]
        do {
            baseline = try options[compare].map { path throws(BenchmarkError) in try BenchmarkBaseline.read(path) }
            truths = try truthFiles.map { path throws(BenchmarkError) in try FaceTruth.read(path) }
        } catch {
            throw RuntimeFailure("\(error)", exitCode: ExitCode.dataError)
        }
        let outputs = [options[saveBaseline], options[json], options[junit], options[markdown]].compactMap { $0 }
        guard Set(outputs).count == outputs.count else {
            throw UsageError("two of --save-baseline, --json, --junit and --markdown name the same file")
        }
        for path in outputs { try OutputFile.check(path, replacing: true) }
        let began = ContinuousClock.now
        let devices = try DeviceChoice.resolveAll(options)
        if let paced = devices.first(where: { $0.isPaced || $0.deviceType != .file }) {
            throw UsageError(
                "\(DetectCommand.sourceName(paced)) runs at its own rate (a live stream): bench measures files read as fast as the pipeline goes"
            )
        }
        let settings = try DetectorSettings(options)
        let preset = options[DetectCommand.preset] ?? .high
        let limits = DetectPipeline.Limits(frames: options[frames], duration: options[duration])
        let roundCount = options[rounds] ?? 3

        // Inputs named as given (a relative path stays relative), so that a baseline made in one
        // checkout compares in another; a stream's password never shows.
        let given = options.all(input)
        let names = given.count == devices.count ? given.map { redactingCredentials($0) } : devices.map(DetectCommand.sourceName)
        var measured = names.map { BenchInput(name: $0) }
        var interrupted = false
        rounds: for round in 0..<roundCount {
            for (index, device) in devices.enumerated() {
                let reference = BenchmarkReference.measure()
                let before = CPUBudget.processCPUTime()
                let started = ContinuousClock.now
                MemoryProbe.startNewPeak()
                let result = try DetectPipeline.run(
                    device: device, preset: preset, settings: settings, limits: limits, printFrames: false,
                    source: measured[index].name)
                let wall = (ContinuousClock.now - started) / .seconds(1)
                let cpu = (CPUBudget.processCPUTime() - before) / .seconds(1)
                if case .failed(let message, let code) = result.end { throw RuntimeFailure(message, exitCode: code) }
                if case .interrupted = result.end {
                    interrupted = true
                    break rounds
                }
                let figures = BenchmarkRound(
                    framesCaptured: result.snapshot.framesCaptured, framesDelivered: result.snapshot.framesDelivered, wallSeconds: wall,
                    cpuSeconds: cpu, referenceRate: reference)
                measured[index].result.rounds.append(figures)
                measured[index].snapshots.append(result.snapshot)
                Console.err("framekit: bench round \(round + 1)/\(roundCount): \(measured[index].name): \(figures.line)")
            }
        }
        // Recall and precision from one more run of each input with truth, untimed (the faces of a
        // file read as fast as it goes are the same on every run).
        if !interrupted {
            for (index, truth) in truths.enumerated() {
                let found = Mutex<[Int: [Rect]]>([:])
                let result = try DetectPipeline.run(
                    device: devices[index], preset: preset, settings: settings, limits: limits, printFrames: false,
                    faces: { frame, boxes in found.withLock { $0[frame] = boxes } })
                if case .failed(let message, let code) = result.end { throw RuntimeFailure(message, exitCode: code) }
                if case .interrupted = result.end {
                    interrupted = true
                    break
                }
                measured[index].result.accuracy = truth.score(found.withLock { $0 })
            }
        }
        let complete = measured.filter { !$0.result.rounds.isEmpty }
        let results = complete.map(\.result)
        if !complete.isEmpty {
            Console.out(BenchmarkResult.table(results))
            if let path = options[json] {
                try OutputFile.write(JSON.object([("inputs", .array(complete.map(\.json)))]).text + "\n", to: path, replacing: true)
            }
        }
        if interrupted {
            // A gate stopped before its verdict must not read as a pass.
            guard options[saveBaseline] == nil && options[compare] == nil else {
                Console.err("framekit: interrupted before every round ran: nothing compared, no baseline written")
                return ExitCode.temporaryFailure
            }
            return ExitCode.success
        }
        guard !complete.isEmpty else { throw RuntimeFailure("no round completed") }
        if let path = options[saveBaseline] {
            if let idle = results.first(where: { $0.relativeSpeed <= 0 }) {
                throw RuntimeFailure("\(idle.name) delivered no frame: no speed to save (see its summary with --json)")
            }
            try OutputFile.write(
                BenchmarkBaseline(results: results, cpus: CPUAllowance.current.count).text, to: path, replacing: true)
            Console.err("framekit: baseline written to \(path)")
        }
        let comparison = baseline.map {
            $0.compare(
                results, tolerance: options[tolerance] ?? 1.25, maxQualityDrop: options[maxQualityDrop] ?? 0.02,
                cpus: CPUAllowance.current.count)
        }
        for line in comparison?.lines ?? [] { Console.out(line) }
        if let path = options[junit] {
            let seconds = (ContinuousClock.now - began) / .seconds(1)
            try OutputFile.write(BenchmarkReport.junit(results, comparison: comparison, seconds: seconds), to: path, replacing: true)
        }
        if let path = options[markdown] {
            try OutputFile.write(BenchmarkReport.markdown(results, comparison: comparison), to: path, replacing: true)
        }
        return comparison?.regressed == true ? regressionExit : ExitCode.success
    }
}
