import Dispatch
import Foundation
import FrameKit
import Synchronization

/// `framekit photo`: one still photo as a JPEG file.
enum PhotoCommand: Command {
    static let name = "photo"
    static let abstract = "Take one photo (JPEG through libjpeg-turbo)."
    static let usage = "framekit photo --output FILE.jpg [--preset NAME] [--device PATH|ID|virtual] [--quality 1-100]"
    static let output = Option.text("output", "FILE.jpg", help: "Where to write the photo: .jpg or .jpeg (never overwritten). Required.")
    static let preset = DeviceChoice.preset(help: "Session preset (default photo: the largest size the device offers).")
    static let quality = Option.integer("quality", "Q", 1...100, help: "JPEG quality (default 92).")
    static let specs = [output.spec, preset.spec, DeviceChoice.oneDevice.spec, ControlSettings.control.spec, quality.spec]

    final class Waiter: PhotoCaptureDelegate {
        let result = Mutex<(Photo?, CaptureError?)?>(nil)
        let done = DispatchSemaphore(value: 0)
        func photoOutput(_ output: PhotoOutput, didFinishProcessingPhoto photo: Photo?, error: CaptureError?) {
            result.withLock { $0 = (photo, error) }
            done.signal()
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try ParsedOptions(arguments, specs: specs, command: "framekit photo")
        guard let path = options[output] else { throw UsageError("--output FILE.jpg is required") }
        let quality = options[quality] ?? 92
        let preset = options[preset] ?? .photo
        let url = URL(fileURLWithPath: path)
        // The extension decides the format, and photos are JPEG: anything else is refused.
        guard ["jpg", "jpeg"].contains(url.pathExtension.lowercased()) else {
            throw UsageError("--output must end in .jpg or .jpeg (photos are JPEG), got '\(path)'")
        }
        try OutputFile.check(url.path, replacing: false)
        let device = try DeviceChoice.resolve(options)
        let session: CaptureSession
        let photoOutput = PhotoOutput()
        do {
            session = try DeviceChoice.session(device: device, preset: preset, output: photoOutput)
            try session.startRunning()
        } catch { throw RuntimeFailure(error) }
        defer { session.stopRunning() }
        let waiter = Waiter()
        photoOutput.capturePhoto(with: try PhotoSettings(quality: quality), delegate: waiter)
        guard waiter.done.wait(timeout: .now() + 30) == .success else { throw RuntimeFailure("no frame arrived within 30 s") }
        let (photo, error) = waiter.result.withLock { $0! }
        guard let photo else { throw RuntimeFailure("\(error.map { "\($0)" } ?? "no photo")") }
        let data = photo.fileDataRepresentation()
        try OutputFile.write(data, to: url.path, replacing: false)
        Console.out(
            JSON.object([
                ("photo", .string(url.path)), ("width", .int(photo.pixelBuffer.width)),
                ("height", .int(photo.pixelBuffer.height)), ("bytes", .int(data.count)),
                ("source", .string(DetectCommand.sourceName(device)))
            ]).text)
        return ExitCode.success
    }
}
