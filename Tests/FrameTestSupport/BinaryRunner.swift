import Foundation
import Synchronization

/// Runs a built executable of this package as a real process.
public struct BinaryRun: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// The JSON objects printed one per line.
    public func jsonLines() throws -> [[String: Any]] {
        try lines.map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw CocoaError(.coderReadCorrupt)
            }
            return object
        }
    }

    /// The run's summary (`framekit detect`'s `{"summary": …}` line), if it printed one.
    public func summary() throws -> [String: Any]? {
        try jsonLines().lazy.compactMap { $0["summary"] as? [String: Any] }.first
    }
}

public enum BinaryRunner {
    /// The folder SwiftPM put the products in (the test bundle's own).
    public static var productsFolder: URL {
        var url = Bundle.main.bundleURL
        if url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }

    public static func run(
        _ product: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Double = 120
    ) throws -> BinaryRun {
        try runTool(productsFolder.appendingPathComponent(product).path, arguments, environment: environment, timeout: timeout)
    }

    /// Starts `framekit` with `arguments`, stdout read as it comes (stderr discarded), for a
    /// test that signals or watches it while it runs.
    public static func launch(_ arguments: [String]) throws -> (process: Process, stdout: ReadAll) {
        let process = Process()
        process.executableURL = productsFolder.appendingPathComponent("framekit")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, ReadAll(out.fileHandleForReading))
    }

    /// Runs `framekit` with `arguments`, sends it `signal` (SIGTERM: what Kubernetes and Slurm
    /// send) once `ready` holds for what it has printed so far (a frame line, an output written:
    /// the moment the test means, however slow the machine; after `timeout` seconds it is sent
    /// anyway), and returns how it exited and what it printed.
    public static func runInterrupted(
        _ arguments: [String], signal: Int32 = SIGTERM, timeout: Double = 60, stopWithin: Double? = nil,
        when ready: (_ stdout: String) -> Bool
    ) throws -> (reason: Process.TerminationReason, status: Int32, stdout: String) {
        let (process, reader) = try launch(arguments)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && !ready(reader.soFar) && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, signal) }
        // A process that ignores the signal is killed after `stopWithin` (default: another
        // `timeout`): the test fails on its status instead of hanging. Not a claim about how
        // fast it stops: a loaded machine may take seconds.
        let stopBy = Date().addingTimeInterval(stopWithin ?? timeout)
        while process.isRunning && Date() < stopBy { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return (process.terminationReason, process.terminationStatus, reader.wait())
    }

    /// Runs any executable by path, with `stdin` as its standard input (none if nil).
    public static func runTool(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Double = 120, stdin: String? = nil
    ) throws -> BinaryRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let input, let stdin {
            // Written from a thread of its own: more than a pipe's buffer would block here
            // while the process blocks writing its output.
            let bytes = Data(stdin.utf8)
            Thread.detachNewThread {
                try? input.fileHandleForWriting.write(contentsOf: bytes)
                try? input.fileHandleForWriting.close()
            }
        }
        // Read both pipes while the process runs, so a full pipe never blocks it.
        let outData = ReadAll(out.fileHandleForReading)
        let errData = ReadAll(err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return BinaryRun(status: process.terminationStatus, stdout: outData.wait(), stderr: errData.wait())
    }
}

/// A running `framekit preview`: the process and the port it announced on stdout.
public struct RunningPreview {
    public let process: Process
    public let port: Int

    /// Starts `framekit` with `arguments` (a preview with `--port 0`) and reads the port it announces.
    public static func start(_ arguments: [String]) throws -> RunningPreview {
        let process = Process()
        process.executableURL = BinaryRunner.productsFolder.appendingPathComponent("framekit")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        guard let announced = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let port = announced["port"] as? Int
        else {
            process.interrupt()
            process.waitUntilExit()
            throw CocoaError(.coderReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: "no port announced: \(line)"])
        }
        return RunningPreview(process: process, port: port)
    }

    /// Ends it as Ctrl-C would and waits.
    public func stop() {
        process.interrupt()
        process.waitUntilExit()
    }
}

/// Reads a pipe to its end on a background thread.
public final class ReadAll: Sendable {
    private let data = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)
    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                data.withLock { $0.append(chunk) }
            }
            done.signal()
        }
    }
    /// What has been read so far (the process may still be writing).
    public var soFar: String { String(decoding: data.withLock { $0 }, as: UTF8.self) }
    public func wait() -> String {
        done.wait()
        return soFar
    }
}
