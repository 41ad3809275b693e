import Foundation

/// Busy loops beside a test, each a process of its own, as `shared/tools/with-load` runs them:
/// real time that holds only on an idle machine is not real time. Each ends by itself after
/// `seconds` (a test that crashes leaves none spinning); ``stop()`` kills them at once.
public final class BusyProcesses: Sendable {
    private let processes: [Process]

    public init(count: Int, seconds: Int = 120) throws {
        var started: [Process] = []
        for _ in 0..<count {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = ["-c", "import time\nend = time.time() + \(seconds)\nwhile time.time() < end: pass"]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do { try process.run() } catch {
                for running in started { kill(running.processIdentifier, SIGKILL) }
                throw error
            }
            started.append(process)
        }
        processes = started
    }

    /// Kills the loops (SIGKILL: a child started from a test's thread inherits its blocked SIGTERM).
    public func stop() {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
