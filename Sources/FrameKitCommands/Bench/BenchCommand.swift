import Foundation
import FrameKit

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
        "framekit bench --input FILE [--input FILE ...] [--rounds N] [--frames N] [--save-baseline FILE | --compare FILE [--tolerance X]] [--json FILE]"
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
    /// Bench's own help for `--input` (the same option as detect's, read by DeviceChoice): files
    /// only, run one after another.
    static let input = Option.repeatable(
        "input", "FILE|DIR",
        help:
            "An input to measure: a video file, a photo or a folder of photos, read as fast as the pipeline goes. Repeat for several; a round runs them one after another. Required."
    )
    static let specs =
        [input.spec, DetectCommand.preset.spec]
        + [rounds.spec, frames.spec, duration.spec, saveBaseline.spec, compare.spec, tolerance.spec, json.spec]
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
        let baseline = try options[compare].map { path in try BenchBaseline.read(path) }
        for path in [options[saveBaseline], options[json]].compactMap({ $0 }) { try OutputFile.check(path, replacing: true) }
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
                let reference = BenchReference.measure()
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
                measured[index].rounds.append(
                    BenchRound(snapshot: result.snapshot, wallSeconds: wall, cpuSeconds: cpu, referenceRate: reference))
                Console.err(
                    "framekit: bench round \(round + 1)/\(roundCount): \(measured[index].name): \(measured[index].rounds.last!.line)")
            }
        }
        let complete = measured.filter { !$0.rounds.isEmpty }
        if !complete.isEmpty {
            Console.out(BenchInput.table(complete))
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
            if let idle = complete.first(where: { $0.relativeSpeed <= 0 }) {
                throw RuntimeFailure("\(idle.name) delivered no frame: no speed to save (see its summary with --json)")
            }
            try OutputFile.write(
                BenchBaseline(inputs: complete, cpus: CPUAllowance.current.count).json.text + "\n", to: path, replacing: true)
            Console.err("framekit: baseline written to \(path)")
        }
        guard let baseline else { return ExitCode.success }
        let verdicts = baseline.compare(complete, tolerance: options[tolerance] ?? 1.25, cpus: CPUAllowance.current.count)
        for line in verdicts.lines { Console.out(line) }
        return verdicts.regressed ? regressionExit : ExitCode.success
    }
}
