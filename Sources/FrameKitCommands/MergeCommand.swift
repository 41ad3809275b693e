import Foundation
import FrameKit

/// `framekit merge DIR`: a batch's per-input stats (`detect --inputs … --output-dir DIR`) as
/// one summary — frames and drops summed, latency percentiles from the merged histograms — with
/// every failed input listed.
enum MergeCommand: Command {
    static let name = "merge"
    static let abstract = "Combine a batch's per-input stats (detect --inputs --output-dir) into one summary and report."
    static let usage = "framekit merge DIR [--output FILE.json] [--report FILE.html]"
    static let output = Option.text(
        "output", "FILE.json", help: "Also write the merged summary, every input's summary and the failures as JSON.")
    static let report = Option.text("report", "FILE.html", help: "Write an HTML report: the merged figures, then each input's.")
    static let specs = [output.spec, report.spec]

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let folder = arguments.first, !folder.hasPrefix("--") else {
            throw UsageError("a batch's DIR is needed (see framekit merge --help)")
        }
        let options = try ParsedOptions(Array(arguments.dropFirst()), specs: specs, command: "framekit merge")
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw RuntimeFailure("\(folder): no such folder", exitCode: ExitCode.dataError)
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
        // The batch's own files are inputs here: --output results/a.mp4.stats.json would replace one.
        let inputs = names.map { URL(fileURLWithPath: folder).appendingPathComponent($0).path }
        for option in [output, report] { if let path = options[option] { try OutputFile.check(path, replacing: true, inputs: inputs) } }
        func object(_ name: String) -> [String: Any]? {
            guard let data = FileManager.default.contents(atPath: URL(fileURLWithPath: folder).appendingPathComponent(name).path) else {
                return nil
            }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
        var snapshots: [StatsSnapshot] = []
        var unreadable: [String] = []
        for name in names where name.hasSuffix(".stats.json") {
            guard let d = object(name), let s = StatsMerge.snapshot(fromDocument: d) else {
                unreadable.append(name)
                continue
            }
            snapshots.append(s)
        }
        // A failure record whose input was done since (a retry succeeded) is history, not a failure.
        let done = Set(snapshots.map(\.source))
        let failures = names.filter { $0.hasSuffix(".failed.json") }.compactMap(object).filter {
            !done.contains($0["input"] as? String ?? "")
        }
        // Nothing to merge: no document (a summary of zero inputs on stdout or in --output would
        // read as a batch that did nothing), and no file written.
        guard !snapshots.isEmpty || !failures.isEmpty else {
            // Every stats file refused is not the same as none there.
            Console.err(
                unreadable.isEmpty
                    ? "framekit merge: \(folder) holds no batch results (*.stats.json, *.failed.json)"
                    : "framekit merge: none of the \(unreadable.count) stats file(s) in \(folder) could be read: \(unreadable.joined(separator: ", "))"
            )
            return ExitCode.dataError
        }
        let merged = StatsMerge.merge(snapshots, source: folder)
        let failureJSON = JSON.array(
            failures.map { f in
                .object([
                    ("input", .string(f["input"] as? String ?? "")), ("error", .string(f["error"] as? String ?? "")),
                    ("exit_code", .int((f["exit_code"] as? NSNumber)?.intValue ?? 1))
                ])
            })
        let summary = JSON.object(
            [("inputs_done", .int(snapshots.count)), ("inputs_failed", .int(failures.count))] + mergedFields(merged, of: snapshots)
                + [("failures", failureJSON), ("unreadable", .array(unreadable.map { .string($0) }))])
        Console.out(JSON.object([("merged", summary)]).text)
        if let path = options[output] {
            let document = JSON.object([
                ("merged", summary),
                ("inputs", .array(snapshots.map { .object([("input", .string($0.source))] + StatsJSON.summaryFields($0)) }))
            ])
            try OutputFile.write(document.text + "\n", to: path, replacing: true)
        }
        if let path = options[report] {
            let failed = failures.map { f in
                StatsReport.Failure(
                    input: f["input"] as? String ?? "", error: f["error"] as? String ?? "",
                    exitCode: (f["exit_code"] as? NSNumber)?.intValue ?? 1)
            }
            try OutputFile.write(
                StatsReport.html(for: [merged] + snapshots, title: "framekit merge \(folder)", failures: failed, firstIsMerged: true),
                to: path, replacing: true)
        }
        return ExitCode.success
    }

    /// The merged summary's fields: what adds up across inputs, and nothing that does not. The
    /// size when every input had one size (else `sizes`, each one); no `stages` (no stage
    /// histograms are kept to merge) and no current RSS (of which process?): the peak is the
    /// largest input's.
    static func mergedFields(_ merged: StatsSnapshot, of inputs: [StatsSnapshot]) -> [(String, JSON)] {
        let sizes = Array(Set(inputs.map { "\($0.width)x\($0.height)" })).sorted()
        return StatsJSON.summaryFields(merged).compactMap { field -> (String, JSON)? in
            switch field.0 {
            case "width", "height": return sizes.count == 1 ? field : nil
            case "stages": return nil
            case "memory":
                return (
                    "memory",
                    .object([
                        ("rss_peak_mb", .number(merged.memory.rssPeakMB, decimals: 1)),
                        ("pool_peak_bytes", .int(merged.memory.poolPeakBytes))
                    ])
                )
            default: return field
            }
        } + (sizes.count > 1 ? [("sizes", .array(sizes.map { .string($0) }))] : [])
    }
}
