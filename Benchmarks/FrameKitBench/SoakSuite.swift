import Foundation

/// Memory over a long run: `framekit preview` (no client) and `framekit detect` on the virtual
/// camera at 720p, side by side for `minutes`, their VmRSS sampled every 10 s. A long run's
/// memory must be flat once warm: the spread after the warm-up (10 minutes, or a third of a
/// shorter run) is compared with `limit` (5%: #29's bar). Not in `--quick`: an hour is the point.
struct SoakResult: Codable {
    var command: String
    var minutes: Double
    var rss_at_1_min_mb: Double
    var rss_after_warmup_min_mb: Double
    var rss_after_warmup_max_mb: Double
    var rss_end_mb: Double
    /// (max − min) / min after the warm-up.
    var spread: Double
}

enum SoakSuite {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(framekit: URL, minutes: Double, interval: Double = 10) throws -> [SoakResult] {
        let commands: [[String]] = [
            ["preview", "--preset", "hd1280x720", "--device", "virtual", "--port", "0"],
            ["detect", "--preset", "hd1280x720", "--device", "virtual"]
        ]
        var processes: [Process] = []
        defer {
            for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        for arguments in commands {
            let process = Process()
            process.executableURL = framekit
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            // The policy the CLI sets for itself; an inherited MALLOC_MMAP_THRESHOLD_ would win.
            process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("MALLOC_") }
            try process.run()
            processes.append(process)
        }
        let start = Date()
        var samples: [[(minute: Double, mb: Double)]] = Array(repeating: [], count: commands.count)
        while Date().timeIntervalSince(start) < minutes * 60 {
            Thread.sleep(forTimeInterval: interval)
            let minute = Date().timeIntervalSince(start) / 60
            for (index, process) in processes.enumerated() {
                guard process.isRunning, let mb = residentMB(process.processIdentifier) else {
                    throw Failure(description: "soak: framekit \(commands[index][0]) ended early (status \(process.terminationStatus))")
                }
                samples[index].append((minute, mb))
            }
            if samples[0].count % 30 == 0 {
                log(
                    "soak: \(f(minute, 1)) min: "
                        + zip(commands, samples).map { "\($0[0]) \(f($1.last?.mb ?? 0, 1)) MB" }.joined(separator: ", "))
            }
        }
        for process in processes {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
        let warmup = min(10, minutes / 3)
        return zip(commands, samples).map { arguments, series in
            let warm = series.filter { $0.minute >= warmup }.map(\.mb)
            let low = warm.min() ?? 0
            let high = warm.max() ?? 0
            return SoakResult(
                command: "framekit " + arguments.joined(separator: " "), minutes: minutes,
                rss_at_1_min_mb: series.first { $0.minute >= 1 }?.mb ?? series.first?.mb ?? 0,
                rss_after_warmup_min_mb: low, rss_after_warmup_max_mb: high, rss_end_mb: series.last?.mb ?? 0,
                spread: low > 0 ? (high - low) / low : 0)
        }
    }

    /// VmRSS of `pid` in MB, from /proc.
    static func residentMB(_ pid: Int32) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return nil }
        return kilobytes / 1024
    }
}
