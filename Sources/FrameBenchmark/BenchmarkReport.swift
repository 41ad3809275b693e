import Foundation
import FrameStats

/// A benchmark's results for CI systems (what `framekit bench --junit` and `--markdown` write): JUnit XML (`--junit`: a test case per input, a
/// failure where it regressed) and a Markdown job summary (`--markdown`: a table per input and
/// the comparison's lines).
public enum BenchmarkReport {
    public static func junit(_ inputs: [BenchmarkResult], comparison: BenchmarkComparison?, seconds: Double) -> String {
        let failures = comparison?.verdicts.filter(\.regressed).count ?? 0
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="framekit bench" tests="\(inputs.count)" failures="\(failures)" time="\(String(format: "%.3f", seconds))">
            <testsuite name="framekit bench" tests="\(inputs.count)" failures="\(failures)" errors="0" skipped="0" time="\(String(format: "%.3f", seconds))">

            """
        for input in inputs {
            let time = input.rounds.reduce(0) { $0 + $1.wallSeconds }
            xml +=
                "<testcase classname=\"framekit.bench\" name=\"\(StatsReport.escape(input.name))\" time=\"\(String(format: "%.3f", time))\">\n"
            let verdict = comparison?.verdicts.first { $0.input == input.name }
            let line = comparison?.lines.first { $0.hasPrefix("compare: \(input.name):") }
            if let verdict, verdict.regressed {
                let kind = [verdict.tooSlow ? "slower" : nil, verdict.qualityDropped ? "quality" : nil].compactMap { $0 }.joined(
                    separator: ", ")
                xml += "<failure message=\"\(StatsReport.escape(line ?? "regression"))\" type=\"\(kind)\"/>\n"
            }
            xml += "<system-out>\(StatsReport.escape(figures(input) + (line.map { "\n" + $0 } ?? "")))</system-out>\n</testcase>\n"
        }
        return xml + "</testsuite>\n</testsuites>\n"
    }

    public static func markdown(_ inputs: [BenchmarkResult], comparison: BenchmarkComparison?) -> String {
        var text = "## framekit bench\n\n"
        if let comparison {
            text += comparison.regressed ? "**Regression** against the baseline.\n\n" : "No regression against the baseline.\n\n"
        }
        text += "| input | rounds | results/s | CPU ms/frame | relative speed | noise | recall | precision | against the baseline |\n"
        text += "|---|---|---|---|---|---|---|---|---|\n"
        for input in inputs {
            let verdict = comparison?.verdicts.first { $0.input == input.name }
            let against =
                verdict.map { v in
                    String(format: "%.2fx the time", v.slowdown) + (v.regressed ? " **REGRESSION**" : " ok")
                } ?? "—"
            let cells = [
                cell(input.name), "\(input.rounds.count)", String(format: "%.1f", input.resultsPerSecond),
                String(format: "%.2f", input.cpuSecondsPerFrame * 1000), String(format: "%.4f", input.relativeSpeed),
                String(format: "%.1f%%", input.noise * 100), input.accuracy.map { String(format: "%.3f", $0.recall) } ?? "—",
                input.accuracy.map { String(format: "%.3f", $0.precision) } ?? "—", against
            ]
            text += "| " + cells.joined(separator: " | ") + " |\n"
        }
        if let comparison {
            text += "\n" + comparison.lines.map { "- " + cell($0) }.joined(separator: "\n") + "\n"
        }
        return text
    }

    private static func figures(_ input: BenchmarkResult) -> String {
        String(
            format: "%d rounds, %.1f results/s, %.2f ms CPU/frame, relative speed %.4f, noise %.1f%%", input.rounds.count,
            input.resultsPerSecond, input.cpuSecondsPerFrame * 1000, input.relativeSpeed, input.noise * 100)
            + (input.accuracy.map { String(format: ", recall %.3f, precision %.3f", $0.recall, $0.precision) } ?? "")
    }

    /// Text for a Markdown table cell: pipes and line breaks would end the cell or the row.
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
