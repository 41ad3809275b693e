import Foundation
import FrameKit
import FrameTestSupport
import Synchronization

// What the vivid suite's cases share: the VM's settings from the environment, the driver's
// reload, sessions, and checks of frames, numbering and descriptors.

let device = ProcessInfo.processInfo.environment["VIVID_DEVICE"] ?? "/dev/video0"
let framekitBinary = ProcessInfo.processInfo.environment["FRAMEKIT_BIN"] ?? ""
let vividOptions = ProcessInfo.processInfo.environment["VIVID_OPTIONS"] ?? "n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0"
let kroot = ProcessInfo.processInfo.environment["VM_KROOT"] ?? ""
// Under software emulation everything runs several times slower: scale time limits.
let timeScale = Double(ProcessInfo.processInfo.environment["VIVID_TIME_SCALE"] ?? "1") ?? 1

/// Unbuffered lines, so the harness sees progress even if the VM dies.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw Failure(message()) }
}

@discardableResult
func shell(_ command: String, _ arguments: [String]) -> (status: Int32, output: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: command.hasPrefix("/") ? command : "/usr/bin/env")
    p.arguments = command.hasPrefix("/") ? arguments : [command] + arguments
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = pipe
    do { try p.run() } catch { return (-1, "\(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

func setControl(_ name: String, _ value: Int = 1) throws {
    let r = shell("v4l2-ctl", ["-d", device, "-c", "\(name)=\(value)"])
    try check(r.status == 0, "v4l2-ctl -c \(name)=\(value): \(r.output)")
}

/// (Re)loads vivid so every case starts from the driver's defaults (`options`: its module
/// parameters, the suite's own by default).
func reloadVivid(_ options: String = vividOptions, nodes: [String] = [device]) throws {
    _ = shell("modprobe", ["-d", kroot, "-r", "vivid"])
    let r = shell("modprobe", ["-d", kroot, "vivid"] + options.split(separator: " ").map(String.init))
    try check(r.status == 0, "modprobe vivid: \(r.output)")
    for node in nodes {
        let deadline = Date().addingTimeInterval(10 * timeScale)
        while !FileManager.default.fileExists(atPath: node) && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        try check(FileManager.default.fileExists(atPath: node), "\(node) did not appear after modprobe")
    }
}

func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

/// Descriptors back to at most `count` (the capture thread closes its own as it ends, after
/// `stopRunning` returns for a pipeline that ended by itself); checked until a deadline.
func checkNoDescriptorsLeaked(since count: Int) throws {
    let deadline = Date().addingTimeInterval(5 * timeScale)
    while openDescriptors() > count && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    try check(openDescriptors() <= count, "descriptors leaked: \(count) → \(openDescriptors())")
}

func session(
    preset: SessionPreset, format: PixelFormat?, fps: Double? = nil, collector: Recorder,
    discardsLate: Bool = true
) throws -> (CaptureSession, VideoDataOutput, CaptureDevice) {
    let camera = try CaptureDevice.v4l2(path: device)
    if let fps { try camera.setActiveVideoMinFrameDuration(1 / fps) }
    let (session, output) = try makeSession(camera, preset: preset, recorder: collector, format: format, discardsLate: discardsLate)
    return (session, output, camera)
}

/// vivid's default pattern: 75% colour bars, white to black, left to right; luma falls bar by bar.
/// A session at `.low`, 30 fps, running with its first 3 frames in, its notifications watched,
/// and the count of descriptors open before it started (for the leak check).
func watchedSession() throws -> (CaptureSession, Recorder, NotificationLog, Int) {
    let collector = Recorder(keepPixelsOfFirst: 3)
    let (session, _, _) = try session(preset: .low, format: nil, fps: 30, collector: collector)
    let notes = NotificationLog(session)
    let fds = openDescriptors()
    try session.startRunning()
    _ = collector.wait(timeout: 30) { $0.frames.count >= 3 }
    return (session, collector, notes, fds)
}

/// Captures at `.low`, 30 fps, queueing (no late drops), with vivid's `control` set to `value`
/// (0 again after), until `frames` frames came or a minute passed.
func capture(with control: String, _ value: Int, frames: Int) throws -> (Recorder, VideoDataOutput) {
    try setControl(control, value)
    defer { try? setControl(control, 0) }
    let collector = Recorder(keepPixelsOfFirst: 3)
    let (session, output, _) = try session(preset: .low, format: nil, fps: 30, collector: collector, discardsLate: false)
    try session.startRunning()
    _ = collector.wait(timeout: 60) { $0.frames.count >= frames }
    session.stopRunning()
    return (collector, output)
}

/// Every number from the first to the last reported exactly once, as frame or drop; when not,
/// what was wrong, near where (the failure is read from a CI log, so it says enough to find it).
func checkNumbering(_ collector: Recorder, _ label: String) throws {
    let events = collector.frames.map { ($0.sequenceNumber, "frame") } + collector.drops.map { ($0.sequenceNumber, "\($0.reason)") }
    let byNumber = Dictionary(grouping: events, by: \.0)
    let twice = byNumber.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }
    guard let low = byNumber.keys.min(), let high = byNumber.keys.max() else { throw Failure("\(label): nothing reported") }
    let missing = (low...high).filter { byNumber[$0] == nil }
    try check(
        twice.isEmpty && missing.isEmpty,
        "\(label): numbers \(low)...\(high), \(events.count) reported; twice: "
            + twice.prefix(5).map { "\($0.key) as \($0.value.map(\.1))" }.joined(separator: ", ")
            + "; missing: \(missing.prefix(10))")
}

func checkColourBars(_ buffer: PixelBuffer) throws {
    let gray = try PixelFormatConversion.convert(buffer, to: .gray8)
    // Low in the picture: vivid writes its status text over the top rows (at 320x180 that
    // reaches past the middle).
    let row = gray.height * 7 / 8
    let lumas: [Int] = (0..<8).map { bar in
        let x = (bar * 2 + 1) * gray.width / 16
        return gray.withUnsafeBytes(ofPlane: 0) { b, p in Int(b[row * p.bytesPerRow + x]) }
    }
    try check(zip(lumas, lumas.dropFirst()).allSatisfy { $0 > $1 }, "luma across the bars is not falling: \(lumas)")
    try check(lumas[0] > 150 && lumas[7] < 40, "white/black bars out of range: \(lumas)")
    if buffer.format == .bgra32 || buffer.format == .rgb24 {
        let rgb = try PixelFormatConversion.convert(buffer, to: .rgb24)
        // Bar 2 (yellow): red and green high, blue low. Bar 7 (blue): blue high, red and green low.
        func pixel(_ bar: Int) -> [Int] {
            let x = (bar * 2 + 1) * rgb.width / 16
            return rgb.withUnsafeBytes(ofPlane: 0) { b, p in (0..<3).map { Int(b[row * p.bytesPerRow + x * 3 + $0]) } }
        }
        let yellow = pixel(1)
        let blue = pixel(6)
        try check(yellow[0] > 150 && yellow[1] > 150 && yellow[2] < 60, "yellow bar is \(yellow)")
        try check(blue[2] > 150 && blue[0] < 60 && blue[1] < 60, "blue bar is \(blue)")
    }
}

/// The luma of vivid's eight bars low in the picture (see checkColourBars).
func barLumas(_ buffer: PixelBuffer) throws -> [Int] {
    let gray = try PixelFormatConversion.convert(buffer, to: .gray8)
    let row = gray.height * 7 / 8
    return (0..<8).map { bar in
        let x = (bar * 2 + 1) * gray.width / 16
        return gray.withUnsafeBytes(ofPlane: 0) { b, p in Int(b[row * p.bytesPerRow + x]) }
    }
}

/// The bars of a frame captured after now (frames in flight when a control changes may not show it yet).
func barsAfterChange(_ collector: Recorder) throws -> [Int] {
    let seen = collector.frames.count
    try check(collector.wait(timeout: 5 * timeScale) { $0.frames.count >= seen + 4 }, "no frames after the change")
    return try barLumas(collector.frames.last!.pixelBuffer)
}
