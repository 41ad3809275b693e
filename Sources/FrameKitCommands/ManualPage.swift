/// framekit(1), the manual page `scripts/install` and the Debian package install
/// (`framekit help --man`): written from the same declarations as `--help`, so the two cannot
/// disagree.
enum ManualPage {
    /// The page, in the man(7) macros groff and mandoc read.
    static func text(commands: [any Command.Type], version: String) -> String {
        var lines = [
            #".TH FRAMEKIT 1 "" "framekit \#(version)" "User Commands""#,
            ".SH NAME",
            #"framekit \- real-time frame capture and face detection on Linux"#,
            ".SH SYNOPSIS",
            #".B framekit"#,
            #".I subcommand"#,
            #"[\fIoptions\fR]"#,
            ".br",
            #".B framekit help"#,
            #"[\fIsubcommand\fR | \fB\-\-man\fR | \fB\-\-markdown\fR | \fB\-\-completion\fR \fIbash\fR|\fIzsh\fR]"#,
            ".SH DESCRIPTION",
            escaped(
                "framekit captures frames from V4L2 cameras, a built-in virtual camera, video files, photos and "
                    + "live streams, detects faces in them with a CNN, and reports every frame it drops with its reason. "
                    + "Options take their value as the next argument or after an equals sign."),
            ".SH COMMANDS"
        ]
        for command in commands {
            lines += [".SS \(quoted("framekit " + command.name))", escaped(command.abstract), ".PP", "Usage:", ".RS", ".nf"]
            lines.append(escaped(command.usage))
            lines += [".fi", ".RE"]
            for spec in command.specs {
                lines.append(".TP")
                lines.append(#"\fB\-\-"# + escaped(spec.name) + #"\fR"# + (spec.valueName.map { #" \fI"# + escaped($0) + #"\fR"# } ?? ""))
                lines.append(escaped(spec.help + (spec.repeatable ? " May be given more than once." : "")))
            }
        }
        lines += [
            ".SH EXIT STATUS",
            ".TP", "0", "Done.",
            ".TP", "1", "A runtime failure.",
            ".TP", "\(BenchCommand.regressionExit)",
            "bench \\-\\-compare: an input got slower than the baseline beyond the tolerance and the noise.",
            ".TP", "\(ExitCode.usage)", "A usage error: an unknown option or a value out of range (nothing ran).",
            ".TP", "\(ExitCode.dataError)", "The input is not data framekit can read.",
            ".TP", "\(ExitCode.unavailable)", "No such device or stream, or not a camera.",
            ".TP", "\(ExitCode.cannotCreate)", "An output file could not be created (or already exists).",
            ".TP", "\(ExitCode.ioError)", "Standard output or an output file could not be written.",
            ".TP", "\(ExitCode.temporaryFailure)", "A device or stream was lost while running, or is busy: a retry may help.",
            ".SH ENVIRONMENT",
            ".TP", ".B FRAMEKIT_MODELS",
            escaped("A folder searched first for the face models (centerface.onnx, the Haar cascade)."),
            ".SH FILES",
            ".TP", #".I <prefix>/share/framekit/models"#,
            escaped("The shipped CenterFace model and Haar cascade, beside the installed binary's prefix."),
            ".SH SEE ALSO",
            escaped("docs/cli.md in FrameKit's source for every output's format; framekit <subcommand> --help.")
        ]
        return lines.joined(separator: "\n")
    }

    /// Text as roff reads it literally: a backslash is `\e`, a hyphen `\-` (so options copy and
    /// search as ASCII), anything beyond ASCII a `\[uXXXX]` (troff reads its input as Latin-1),
    /// and a line cannot start with a control character.
    static func escaped(_ text: String) -> String {
        var body = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": body += "\\e"
            case "-": body += "\\-"
            case _ where scalar.isASCII: body.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                body += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return body.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix(".") || line.hasPrefix("'") ? "\\&" + line : String(line)
        }.joined(separator: "\n")
    }

    private static func quoted(_ text: String) -> String { "\"" + escaped(text).replacingOccurrences(of: "\"", with: "\\(dq") + "\"" }
}
