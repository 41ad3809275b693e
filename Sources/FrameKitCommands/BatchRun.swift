import Foundation
import FrameKit
import Synchronization

/// `framekit detect --inputs LIST|DIR --output-dir D`: one shard of a batch over many files
/// or streams, as a Slurm array task or a Kubernetes Indexed Job pod runs it.
///
/// Per input, `NAME.jsonl` (the frame lines) and `NAME.stats.json` (the `--stats` document with
/// its `input`) — each written under a hidden temporary name and renamed when complete, the
/// stats file last: an input whose stats file exists is done and is skipped by a rerun
/// (resumable, idempotent). An input that fails gets `NAME.failed.json` (its error and exit
/// code) and the batch goes on; SIGTERM/SIGINT abandon the input under way (its files never
/// take their names) and end the batch with 75, so a requeued task finishes it.
enum BatchRun {
    static let inputs = Option.text(
        "inputs", "LIST|DIR",
        help:
            "Batch mode: a text file with one file path or stream URL per line (# comments), or a folder of video files and photos (name order; each an input). Needs --output-dir."
    )
    static let outputDir = Option.text(
        "output-dir", "DIR",
        help:
            "Batch mode: where each input's NAME.jsonl and NAME.stats.json go (NAME: its file name with the extension, a.mp4.jsonl; created if missing); inputs done before are skipped."
    )
    static let shard = Option<String>(
        spec: OptionSpec(
            name: "shard", valueName: "I/N",
            help:
                "Batch mode: take inputs I, I+N, I+2N… (0 ≤ I < N). Default: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, or JOB_COMPLETION_INDEX with --shard-count, else all.",
            kind: .text)
    ) { $0 }
    static let shardCount = Option.integer(
        "shard-count", "N", 1...1_000_000,
        help: "Batch mode on Kubernetes: the Indexed Job's completions (JOB_COMPLETION_INDEX is the shard).")
    static let specs = [inputs.spec, outputDir.spec, shard.spec, shardCount.spec]

    /// Video file extensions a folder's files are taken by.
    static let videoExtensions: Set<String> = ["mp4", "mkv", "webm", "mov", "avi", "y4m", "mjpeg", "mjpg", "m4v", "ts", "flv"]
    /// A folder's photos are inputs too, each its own (a folder of photos given to --inputs said
    /// it had no inputs in it).
    static let photoExtensions: Set<String> = ["jpg", "jpeg", "png", "pgm", "ppm", "pnm"]

    struct Shard: Equatable, CustomStringConvertible {
        var index: Int
        var count: Int
        var description: String { "\(index)/\(count)" }
        func takes(_ position: Int) -> Bool { position % count == index }
    }

    /// The shard: `--shard`, else the scheduler's index from the environment, else everything.
    static func shard(_ options: ParsedOptions, environment: [String: String]) throws -> Shard {
        if let text = options[shard] {
            let parts = text.split(separator: "/")
            guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]), n >= 1, (0..<n).contains(i) else {
                throw UsageError("--shard takes I/N with 0 ≤ I < N (e.g. 0/4), got '\(text)'")
            }
            return Shard(index: i, count: n)
        }
        if let id = environment["SLURM_ARRAY_TASK_ID"].flatMap(Int.init) {
            // An array 1-4 has IDs 1…4: count from its first ID; 0-15:4 has IDs 0, 4, 8, 12
            // (SLURM_ARRAY_TASK_STEP 4): shards 0…3.
            let first = environment["SLURM_ARRAY_TASK_MIN"].flatMap(Int.init) ?? 0
            let step = max(1, environment["SLURM_ARRAY_TASK_STEP"].flatMap(Int.init) ?? 1)
            let offset = id - first
            guard let count = environment["SLURM_ARRAY_TASK_COUNT"].flatMap(Int.init), count >= 1, offset >= 0, offset % step == 0,
                (0..<count).contains(offset / step)
            else { throw UsageError("SLURM_ARRAY_TASK_ID is set without a usable SLURM_ARRAY_TASK_COUNT; give --shard I/N") }
            return Shard(index: offset / step, count: count)
        }
        if let index = environment["JOB_COMPLETION_INDEX"].flatMap(Int.init) {
            guard let count = options[shardCount] else {
                throw UsageError("JOB_COMPLETION_INDEX is set: give --shard-count (the Job's completions)")
            }
            guard (0..<count).contains(index) else { throw UsageError("JOB_COMPLETION_INDEX \(index) is not below --shard-count \(count)") }
            return Shard(index: index, count: count)
        }
        // Every pod of a job would otherwise run the whole list.
        if let count = options[shardCount], count > 1 {
            throw UsageError(
                "--shard-count \(count) takes this shard's index from JOB_COMPLETION_INDEX, which is not set; give --shard I/N")
        }
        return Shard(index: 0, count: 1)
    }

    /// The inputs `path` names: a folder's video files and photos in name order, or a list file's lines.
    static func list(_ path: String) throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw RuntimeFailure("--inputs \(path): no such file or folder", exitCode: ExitCode.dataError)
        }
        let found: [String]
        if isFolder.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            found = names.filter { name in
                let ext = URL(fileURLWithPath: name).pathExtension.lowercased()
                return !name.hasPrefix(".") && (videoExtensions.contains(ext) || photoExtensions.contains(ext))
            }
            .sorted().map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
        } else {
            guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
                throw RuntimeFailure("--inputs \(path): cannot read it as text", exitCode: ExitCode.dataError)
            }
            let base = URL(fileURLWithPath: path).deletingLastPathComponent()
            found = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
                .map { $0.contains("://") || $0.hasPrefix("/") ? $0 : base.appendingPathComponent($0).path } // relative to the list
        }
        // Duplicates by their bytes: Swift's String equality is canonical, so `café` written NFC
        // and NFD — two files on disk — would be one input, and the other never processed.
        var seen = Set<[UInt8]>()
        let unique = found.filter { seen.insert(Array($0.utf8)).inserted }
        guard !unique.isEmpty else { throw RuntimeFailure("--inputs \(path): no inputs in it", exitCode: ExitCode.dataError) }
        return unique
    }

    /// A file name per input, the same in every shard: the input's own name, with a hash of
    /// the whole input where two would collide.
    static func names(_ inputs: [String]) -> [String] {
        func base(_ input: String) -> String {
            let raw =
                input.contains("://")
                ? String(
                    redactingCredentials(input).split(separator: "/", omittingEmptySubsequences: true).dropFirst().joined(separator: "_"))
                : URL(fileURLWithPath: input).lastPathComponent
            let safe = String(raw.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
            return safe.hasPrefix(".") ? "_" + safe.dropFirst() : safe
        }
        let bases = inputs.map(base)
        var counts: [String: Int] = [:]
        for b in bases { counts[b, default: 0] += 1 }
        return zip(inputs, bases).map { input, b in
            guard counts[b, default: 0] > 1 else { return b }
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325 // FNV-1a
            for byte in input.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            return b + "-" + String(hash & 0xffff_ffff, radix: 16)
        }
    }

    /// Runs this shard of the batch; the exit code: 0 when every input of the shard is done
    /// (now or before), 75 when one failed in a way a retry may fix or the batch was stopped,
    /// else the first failure's code.
    static func run(
        _ options: ParsedOptions, preset: SessionPreset, settings: DetectorSettings, limits: DetectPipeline.Limits,
        metrics: MetricsEndpoint? = nil
    ) throws -> Int32 {
        guard let list = options[inputs] else { throw UsageError("--output-dir applies to --inputs") }
        guard let folder = options[outputDir] else { throw UsageError("--inputs needs --output-dir DIR") }
        for spec in [DeviceChoice.device.spec, DeviceChoice.input.spec, DetectCommand.annotate.spec, DetectCommand.stats.spec] {
            if options.has(spec) { throw UsageError("--\(spec.name) does not apply to a batch (--inputs)") }
        }
        if options.has(DetectCommand.report.spec) { // it was silently ignored
            throw UsageError("--report does not apply to a batch (--inputs): framekit merge \(folder) --report FILE.html reports on it")
        }
        let all = try self.list(list)
        let names = self.names(all)
        let shard = try self.shard(options, environment: ProcessInfo.processInfo.environment)
        do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
            throw RuntimeFailure("--output-dir \(folder): \(error.localizedDescription)", exitCode: ExitCode.cannotCreate)
        }
        guard access(folder, W_OK) == 0 else {
            throw RuntimeFailure("--output-dir \(folder) is not writable", exitCode: ExitCode.cannotCreate)
        }
        let stop = StopFlag()
        let watch = SignalWatch.onInterrupt { stop.raise() }
        defer { watch.cancel() }
        var tally = (done: 0, skipped: 0, failed: 0)
        var code = ExitCode.success
        var interrupted = false
        for position in all.indices where shard.takes(position) {
            // stdout gone (| head -1, a closed pipe): no one reads the statuses; stop at once
            // rather than process every input and exit 74 at the end.
            if Console.outputFailure != nil { break }
            if stop.isRaised {
                interrupted = true
                break
            }
            let input = all[position]
            let base = URL(fileURLWithPath: folder).appendingPathComponent(names[position]).path
            let (linesPath, statsPath, failedPath) = (base + ".jsonl", base + ".stats.json", base + ".failed.json")
            if FileManager.default.fileExists(atPath: statsPath) {
                tally.skipped += 1
                report(input, "skipped", [("stats", .string(statsPath))])
                continue
            }
            // Claimed for this run: another run on this folder that holds it is doing it now.
            let claim: InputClaim
            switch InputClaim.claim(base: base) {
            case .claimed(let c): claim = c
            case .busy:
                tally.skipped += 1
                report(input, "skipped", [("reason", .string("in progress in another run on this folder"))])
                continue
            case .failed(let message):
                throw RuntimeFailure(message, exitCode: ExitCode.cannotCreate)
            }
            defer { claim.release() }
            if FileManager.default.fileExists(atPath: statsPath) { // done by that other run meanwhile
                tally.skipped += 1
                report(input, "skipped", [("stats", .string(statsPath))])
                continue
            }
            removeStale([linesPath, statsPath], in: folder)
            switch runOne(
                input, linesPath: linesPath, statsPath: statsPath, options: options, preset: preset, settings: settings, limits: limits,
                metrics: metrics)
            {
            case .done(let frames):
                unlink(failedPath)
                tally.done += 1
                report(input, "done", [("frames", .int(frames)), ("stats", .string(statsPath))])
            case .interrupted:
                interrupted = true
            case .failed(let message, let exit):
                tally.failed += 1
                let record = JSON.object([
                    ("input", .string(redactingCredentials(input))), ("error", .string(redactingCredentials(message))),
                    ("exit_code", .int(Int(exit)))
                ])
                try? OutputFile.write(record.text + "\n", to: failedPath, replacing: true)
                report(input, "failed", [("error", .string(message)), ("exit_code", .int(Int(exit)))])
                if code == ExitCode.success || exit == ExitCode.temporaryFailure { code = exit }
            }
            if interrupted { break }
        }
        if interrupted { code = ExitCode.temporaryFailure }
        Console.out(
            JSON.object([
                (
                    "batch",
                    .object([
                        ("shard", .string(shard.description)), ("inputs", .int(all.indices.filter(shard.takes).count)),
                        ("done", .int(tally.done)), ("skipped", .int(tally.skipped)), ("failed", .int(tally.failed)),
                        ("interrupted", .bool(interrupted))
                    ])
                )
            ]).text)
        return code
    }

    /// Set by SIGTERM/SIGINT: no next input is started.
    private final class StopFlag: Sendable {
        private let flag = Atomic<Bool>(false)
        func raise() { flag.store(true, ordering: .relaxed) }
        var isRaised: Bool { flag.load(ordering: .relaxed) }
    }

    private enum Outcome {
        case done(frames: Int)
        case interrupted
        case failed(String, exitCode: Int32)
    }

    private static func runOne(
        _ input: String, linesPath: String, statsPath: String, options: ParsedOptions, preset: SessionPreset,
        settings: DetectorSettings, limits: DetectPipeline.Limits, metrics: MetricsEndpoint?
    ) -> Outcome {
        let lines: PartialFile
        do { lines = try PartialFile(path: linesPath, replacing: true) } catch {
            return .failed("\(error)", exitCode: error.exitCode)
        }
        let device: CaptureDevice
        do {
            // Each line is opened as --input would open it; a line --input would refuse is bad data.
            device = try DeviceChoice.openInput(DeviceChoice.inputURL(input, what: "input"), options: options, start: 0)
        } catch let error as UsageError {
            lines.abandon()
            return .failed(error.description, exitCode: ExitCode.dataError)
        } catch {
            lines.abandon()
            let failure = RuntimeFailure(error)
            return .failed(failure.description, exitCode: failure.exitCode)
        }
        let result: DetectPipeline.Result
        do {
            let sink: @Sendable (String) -> Bool = { lines.append(Array(($0 + "\n").utf8)) }
            // Each input in turn is the source /metrics shows (it served no source before; no
            // `source:`, which would add a field to every line of NAME.jsonl).
            result = try DetectPipeline.run(
                device: device, preset: preset, settings: settings, limits: limits, printFrames: true, sink: sink, metrics: metrics)
        } catch {
            lines.abandon()
            let failure = error as? RuntimeFailure ?? RuntimeFailure(error)
            return .failed(failure.description, exitCode: failure.exitCode)
        }
        switch result.end {
        case .interrupted:
            lines.abandon()
            return .interrupted
        case .failed(let message, let code):
            lines.abandon()
            return .failed(message, exitCode: code)
        case .outputClosed:
            lines.abandon()
            return .failed("cannot write \(linesPath): \(lines.failure ?? "write failed")", exitCode: ExitCode.ioError)
        case .frames, .duration, .endOfInput:
            break
        }
        do {
            try lines.commit()
            guard case .object(let fields) = StatsJSON.document(result.snapshot) else {
                return .failed("stats", exitCode: ExitCode.failure)
            }
            let document = JSON.object([("input", .string(redactingCredentials(input)))] + fields + result.detectorFields)
            try OutputFile.write(document.text + "\n", to: statsPath, replacing: true)
        } catch {
            unlink(linesPath) // the input is not done without its stats: a rerun does it again
            return .failed("\(error)", exitCode: error.exitCode)
        }
        return .done(frames: result.snapshot.framesCaptured)
    }

    /// Temporary files a killed run left for these outputs.
    private static func removeStale(_ paths: [String], in folder: String) {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for path in paths {
            let prefix = URL(fileURLWithPath: PartialFile.temporaryPrefix(for: path)).lastPathComponent
            for entry in entries where entry.hasPrefix(prefix) { unlink(URL(fileURLWithPath: folder).appendingPathComponent(entry).path) }
        }
    }

    private static func report(_ input: String, _ status: String, _ fields: [(String, JSON)]) {
        Console.out(JSON.object([("input", .string(redactingCredentials(input))), ("status", .string(status))] + fields).text)
    }
}
