import CFrameKitAPI
import Foundation
import FrameKit

/// What an `fk_source` is: a running session from the named device into a video data output
/// whose frames a ``FrameHandoff`` pulls for the caller.
final class SourceHandle: Sendable {
    let session: CaptureSession
    let output: VideoDataOutput
    let handoff: FrameHandoff
    let observer: CaptureSession.ObserverToken

    init(device: CaptureDevice, format: PixelFormat, sourceName: String) throws {
        session = CaptureSession()
        output = VideoDataOutput()
        output.videoSettings = VideoSettings(pixelFormat: format)
        // Conversion runs on this queue, for each frame the caller takes.
        output.setSampleBufferDelegate(nil, queue: DispatchQueue(label: "framekit.c-api.source"))
        handoff = try FrameHandoff(output: output, sourceName: sourceName)
        // Cameras at the CLI's default size where they have it, else their largest up to 1080p;
        // files and streams at their own size.
        let isCamera = device.deviceType != .file && device.deviceType != .stream
        let preset: SessionPreset = isCamera && device.supportsSessionPreset(.hd1280x720) ? .hd1280x720 : .high
        let session = session
        let output = output
        try session.configure {
            try session.addInput(CaptureDeviceInput(device: device))
            try session.setSessionPreset(preset)
            try session.addOutput(output)
        }
        let handoff = handoff
        observer = session.addObserver { handoff.notify($0) }
        try session.startRunning()
    }

    /// Stops the session: a ``FrameHandoff/next()`` waiting returns the end.
    func stop() { session.stopRunning() }

    func close() {
        session.stopRunning()
        session.removeObserver(observer)
    }

    /// A device for what the caller named, as `framekit detect --input/--device` takes it.
    static func device(for source: String, options: fk_source_options) throws -> CaptureDevice {
        if source == "virtual" { return CaptureDevice.virtualCamera }
        if source.hasPrefix("/dev/") { return try CaptureDevice.v4l2(path: source) }
        if source.contains("://") {
            guard let url = URL(string: source) else { throw InvalidArgument("'\(redactingCredentials(source))' is not a valid URL") }
            if url.isFileURL { return try CaptureDevice.file(url, realTime: options.realtime != 0) }
            return try CaptureDevice.stream(url, reconnect: .init(attempts: Int(options.reconnect_attempts)))
        }
        return try CaptureDevice.file(URL(fileURLWithPath: source), realTime: options.realtime != 0)
    }
}

@_cdecl("fk_source_options_init")
public func fkSourceOptionsInit(_ options: UnsafeMutablePointer<fk_source_options>?) {
    options?.pointee = fk_source_options(realtime: 0, format: Int32(FK_FORMAT_RGB24), reconnect_attempts: 5)
}

@_cdecl("fk_source_open")
public func fkSourceOpen(
    _ source: UnsafePointer<CChar>?, _ options: UnsafePointer<fk_source_options>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        guard let source else { throw InvalidArgument("source is NULL") }
        guard let out else { throw InvalidArgument("out is NULL") }
        var settings = fk_source_options()
        fkSourceOptionsInit(&settings)
        if let options { settings = options.pointee }
        let format = try FormatCode.format(settings.format)
        guard [.rgb24, .bgra32, .gray8].contains(format) else { throw InvalidArgument("sources deliver RGB24, BGRA32 or GRAY8") }
        guard (0...1000).contains(settings.reconnect_attempts) else {
            throw InvalidArgument("reconnect_attempts \(settings.reconnect_attempts) must be in 0...1000")
        }
        let name = String(cString: source)
        guard !name.isEmpty else { throw InvalidArgument("source is empty: give a file, a folder, a URL, /dev/videoN or virtual") }
        let device = try SourceHandle.device(for: name, options: settings)
        out.pointee = Handle.make(try SourceHandle(device: device, format: format, sourceName: redactingCredentials(name)))
    }
}

@_cdecl("fk_source_next")
public func fkSourceNext(_ source: OpaquePointer?, _ frame: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?)
    -> fk_status
{
    frame?.pointee = nil
    var ended = false
    let status = reporting(error) {
        let handle = try Handle.object(source, as: SourceHandle.self, "source")
        guard let frame else { throw InvalidArgument("frame is NULL") }
        guard let outcome = handle.handoff.next() else {
            throw InvalidArgument(
                "fk_source_next is already running on this source in another thread (a source is read by one thread at a time)")
        }
        switch outcome {
        case .frame(let sample):
            // A frame in one of the source's few pool buffers (a JPEG decoded straight into the
            // delivered format) is copied: a caller keeps frames as long as it likes, and a
            // kept pool buffer would starve the source (out_of_buffers after a second).
            let pixels = sample.pixelBuffer.isBorrowed ? sample.pixelBuffer.copy() : sample.pixelBuffer
            frame.pointee = Handle.make(
                FrameHandle(pixels, sequenceNumber: sample.sequenceNumber, presentationTime: sample.presentationTime))
        case .ended: ended = true
        case .failed(let failure): throw failure
        }
    }
    guard ended else { return status }
    if let error { fill(error, status: fk_status(FK_END), message: "the source has ended") }
    return fk_status(FK_END)
}

@_cdecl("fk_source_get_counts")
public func fkSourceGetCounts(_ source: OpaquePointer?, _ counts: UnsafeMutablePointer<fk_source_counts>?) -> fk_status {
    reporting(nil) {
        let handle = try Handle.object(source, as: SourceHandle.self, "source")
        guard let counts else { throw InvalidArgument("counts is NULL") }
        let now = handle.output.counts
        var result = fk_source_counts()
        result.captured = Int64(now.captured)
        result.delivered = Int64(now.delivered)
        result.pending = Int64(now.pending)
        withUnsafeMutableBytes(of: &result.dropped) { raw in
            let dropped = raw.bindMemory(to: Int64.self)
            for (index, reason) in LibraryStrings.reasons.enumerated() { dropped[index] = Int64(now.dropped(reason)) }
        }
        counts.pointee = result
    }
}

@_cdecl("fk_source_stop")
public func fkSourceStop(_ source: OpaquePointer?) {
    (try? Handle.object(source, as: SourceHandle.self, "source"))?.stop()
}

@_cdecl("fk_source_close")
public func fkSourceClose(_ source: OpaquePointer?) {
    guard let handle = try? Handle.object(source, as: SourceHandle.self, "source") else { return }
    handle.close()
    Handle.release(source)
}
