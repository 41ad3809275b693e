import Foundation
import FrameKit

struct DetectionResult: Codable {
    var clip: String
    var mode: String
    var frames: Int
    var size: String
    /// Frames processed per second by one thread, detection alone (in-process).
    var fps: Double
    var ms_per_frame_p50: Double
    var recall: Double
    var precision: Double
}

/// The real-time run: `framekit detect --input clip --realtime` (the product, paced at 30 fps).
struct RealTimeResult: Codable {
    var clip: String
    var mode: String
    var results_fps: Double
    var frames_captured: Int
    var frames_delivered: Int
    var frames_dropped: Int
    var latency_p50_ms: Double
    var latency_p99_ms: Double
    var recall: Double
    var precision: Double
    var command: String
}

enum DetectionSuite {
    static func run(frames: Int, face: PixelBuffer, background: PixelBuffer, workFolder: URL, framekit: URL?) throws
        -> (inProcess: [DetectionResult], realTime: [RealTimeResult]) {
        let reference = try FaceDetector(options: .init(scaleFactor: 1.05, minNeighbors: 3))
        var inProcess: [DetectionResult] = []
        var realTime: [RealTimeResult] = []
        for moving in [true, false] {
            let name = moving ? "moving-faces" : "new-every-frame"
            let clip = try ClipGenerator.make(frames: frames, width: 1280, height: 720, moving: moving, face: face,
                                              background: background, detector: reference)
            for mode in ["tracking", "full"] {
                let detect: (PixelBuffer) throws -> [Face]
                if mode == "tracking" {
                    let tracker = FaceTracker(detector: try FaceDetector(), options: trackerOptions)
                    detect = { try tracker.faces(in: $0) }
                } else {
                    let detector = try FaceDetector(options: .init(scaleFactor: 1.2, minNeighbors: 4, minFaceSize: 72))
                    detect = { try detector.detect(in: $0) }
                }
                var accuracy = Accuracy()
                var times: [Double] = []
                for (frame, truth) in zip(clip.frames, clip.truth) {
                    let start = Timestamp.now()
                    let faces = try detect(frame)
                    times.append(Timestamp.now().seconds(since: start))
                    accuracy.add(found: faces.map(\.bounds), truth: truth)
                }
                let total = times.reduce(0, +)
                inProcess.append(DetectionResult(clip: name, mode: mode, frames: frames, size: "1280x720",
                                                 fps: Double(frames) / total, ms_per_frame_p50: times.sorted()[times.count / 2] * 1000,
                                                 recall: accuracy.recall, precision: accuracy.precision))
            }
            if let framekit {
                let file = workFolder.appendingPathComponent("\(name).mjpeg")
                try ClipGenerator.writeMJPEG(clip, to: file)
                for mode in ["tracking", "full"] {
                    realTime.append(try runCLI(framekit, clip: clip, file: file, name: name, mode: mode))
                }
            }
        }
        return (inProcess, realTime)
    }

    static let trackerOptions: FaceTracker.Options = {
        var o = FaceTracker.Options()
        o.minFaceFraction = 0.08
        return o
    }()

    static func runCLI(_ framekit: URL, clip: Clip, file: URL, name: String, mode: String) throws -> RealTimeResult {
        let arguments = ["detect", "--input", file.path, "--realtime", "--mode", mode, "--min-face", "57"]
        let process = Process()
        process.executableURL = framekit
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var accuracy = Accuracy()
        var summary: [String: Any] = [:]
        for line in output.split(separator: UInt8(ascii: "\n")) {
            guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else { continue }
            if let s = object["summary"] as? [String: Any] { summary = s; continue }
            guard let index = object["frame"] as? Int, index < clip.truth.count, let faces = object["faces"] as? [[String: Int]] else { continue }
            accuracy.add(found: faces.map { Rect(x: $0["x"]!, y: $0["y"]!, width: $0["width"]!, height: $0["height"]!) }, truth: clip.truth[index])
        }
        // Frames that were dropped produced no result: their faces count as missed.
        let delivered = summary["frames_delivered"] as? Int ?? 0
        let deliveredFrames = Set(output.split(separator: UInt8(ascii: "\n")).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])?["frame"] as? Int
        })
        for (i, truth) in clip.truth.enumerated() where !deliveredFrames.contains(i) { accuracy.falseNegatives += truth.count }
        let latency = summary["latency_ms"] as? [String: Double] ?? [:]
        return RealTimeResult(clip: name, mode: mode, results_fps: summary["fps"] as? Double ?? 0,
                              frames_captured: summary["frames_captured"] as? Int ?? 0, frames_delivered: delivered,
                              frames_dropped: summary["frames_dropped"] as? Int ?? 0,
                              latency_p50_ms: latency["p50"] ?? 0, latency_p99_ms: latency["p99"] ?? 0,
                              recall: accuracy.recall, precision: accuracy.precision,
                              command: "framekit " + arguments.joined(separator: " "))
    }
}
