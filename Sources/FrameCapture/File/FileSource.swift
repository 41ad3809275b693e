import Foundation
import FrameCore
import FrameImageIO
import FramePixels

/// Frames from a Y4M file, an MJPEG stream, or JPEG/PGM/PPM images.
///
/// Not real-time (the default): every frame is delivered, as fast as the consumer takes them,
/// and only damaged frames are dropped (`corrupt`). Real-time: frames are paced at the file's
/// frame rate and late ones drop like a camera's.
final class FileSource: FrameSource {
    let configuration: SourceConfiguration
    let description: FileSourceDescription
    var isRealTime: Bool { description.realTime }
    private let pool: BufferPool
    private let decoder: JPEG.Decoder
    private var reader: FileReader?
    private var scratch: [UInt8] = [] // one frame's bytes, reused
    private var mjpegFrames: [Range<Int>] = []
    private var cursor = 0 // byte offset (Y4M) or frame index (MJPEG, images)
    private var index: UInt64 = 0
    private var startInstant = Timestamp.now()

    init(description: FileSourceDescription, configuration: SourceConfiguration) throws(CaptureError) {
        self.description = description
        self.configuration = configuration
        do {
            pool = try BufferPool(
                width: description.size.width, height: description.size.height,
                format: configuration.pixelFormat, capacity: configuration.bufferCount)
            decoder = try JPEG.Decoder()
        } catch let error as PixelBufferError {
            throw .pixelBuffer(error)
        } catch {
            throw .configuration("\(error)")
        }
    }

    func usageReporter() -> @Sendable () -> BufferPool.Usage { { [pool] in pool.usage } }

    func start() throws(CaptureError) {
        switch description.kind {
        case .y4m, .mjpeg:
            let reader = try FileReader(path: description.url.path)
            self.reader = reader
            cursor = description.y4m?.headerLength ?? 0
            if description.kind == .mjpeg { mjpegFrames = reader.jpegRanges() }
        case .images:
            cursor = 0
        }
        index = 0
        startInstant = Timestamp.now()
    }

    func next() throws(CaptureError) -> SourceEvent {
        let sequence = index
        let time = Double(sequence) / description.frameRate
        // Paced: wait for the frame's moment (in short steps so a stop is seen).
        var captureInstant = Timestamp.now()
        if isRealTime {
            let due = startInstant.adding(seconds: time)
            if due.seconds(since: captureInstant) > 0.05 {
                Timestamp.sleep(until: captureInstant.adding(seconds: 0.05))
                return .idle
            }
            Timestamp.sleep(until: due)
            captureInstant = due
        }
        guard let bytes = nextFrameBytes() else { return .endOfStream }
        index += 1
        let corrupt = SourceEvent.dropped(DroppedFrame(sequenceNumber: sequence, presentationTime: time, reason: .corrupt))
        // Not real-time: wait for a free buffer (the consumer's pace). Real-time: none free is a drop.
        guard var buffer = isRealTime ? pool.makeBuffer() : waitForBuffer() else {
            return isRealTime
                ? .dropped(DroppedFrame(sequenceNumber: sequence, presentationTime: time, reason: .outOfBuffers)) : .endOfStream
        }
        do {
            switch bytes {
            case .raw(let frame):
                guard frame.count == description.y4m!.frameBytes else { return corrupt }
                try fillFromY4M(frame, into: &buffer)
            case .encoded(let frame):
                guard !frame.isEmpty else { return corrupt }
                if JPEG.hasSignature(frame) {
                    try frame.withUnsafeBytes { raw in try decoder.decode(raw, into: &buffer) }
                } else if PNM.hasSignature(frame) {
                    let image = try PNM.decode(frame)
                    guard image.width == buffer.width, image.height == buffer.height else { return corrupt }
                    buffer = try PixelFormatConversion.convert(image, to: buffer.format)
                } else {
                    return corrupt
                }
            case .unreadable:
                return corrupt
            }
        } catch {
            return corrupt
        }
        return .frame(SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: sequence, captureInstant: captureInstant))
    }

    private func waitForBuffer() -> PixelBuffer? {
        // Consumers that never release their frames would stall a file forever; a minute
        // without any buffer back is treated as the end.
        pool.makeBuffer(waitingUpTo: 60)
    }

    private enum FrameBytes {
        case raw([UInt8])
        case encoded([UInt8])
        case unreadable
    }

    private func nextFrameBytes() -> FrameBytes? {
        if description.kind == .images { return nextImage() }
        guard let reader else { return nil }
        switch description.kind {
        case .y4m:
            // "FRAME" [params] "\n" then the pixels.
            reader.read(at: cursor, count: 256, into: &scratch)
            guard !scratch.isEmpty else { return nil }
            guard let newline = scratch.firstIndex(of: 0x0A), scratch[..<newline].starts(with: Array("FRAME".utf8)) else {
                cursor = Int.max / 2 // no way to find the next frame boundary reliably
                return .unreadable
            }
            let start = cursor + newline + 1
            reader.read(at: start, count: description.y4m!.frameBytes, into: &scratch)
            // A short read is a truncated last frame (or a file cut while it was read).
            cursor = scratch.count == description.y4m!.frameBytes ? start + scratch.count : Int.max / 2
            return .raw(scratch)
        case .mjpeg:
            guard cursor < mjpegFrames.count else { return nil }
            defer { cursor += 1 }
            let range = mjpegFrames[cursor]
            reader.read(at: range.lowerBound, count: range.count, into: &scratch)
            return .encoded(scratch)
        case .images:
            return nextImage()
        }
    }

    private func nextImage() -> FrameBytes? {
        guard cursor < description.imageFiles.count else { return nil }
        defer { cursor += 1 }
        guard let bytes = try? Data(contentsOf: description.imageFiles[cursor]) else { return .unreadable }
        return .encoded([UInt8](bytes))
    }

    /// Y4M stores planar Y, Cb, Cr; FrameKit's I420 is the same, 4:2:2 becomes YUYV.
    private func fillFromY4M(_ frame: [UInt8], into buffer: inout PixelBuffer) throws {
        let w = description.size.width
        let h = description.size.height
        try frame.withUnsafeBytes { (src: UnsafeRawBufferPointer) throws in
            switch buffer.format {
            case .i420, .gray8:
                var offset = 0
                for plane in 0..<buffer.planeCount {
                    buffer.withUnsafeMutableBytes(ofPlane: plane) { dst, p in
                        let rowBytes = p.width * p.bytesPerPixel
                        for row in 0..<p.height {
                            (dst.baseAddress! + row * p.bytesPerRow).copyMemory(
                                from: src.baseAddress! + offset + row * rowBytes, byteCount: rowBytes)
                        }
                        offset += rowBytes * p.height
                    }
                }
            case .yuyv:
                let cw = w / 2
                buffer.withUnsafeMutableBytes(ofPlane: 0) { dst, p in
                    for row in 0..<h {
                        for pair in 0..<cw {
                            let o = row * p.bytesPerRow + 4 * pair
                            dst[o] = src[row * w + 2 * pair]
                            dst[o + 1] = src[w * h + row * cw + pair]
                            dst[o + 2] = src[row * w + 2 * pair + 1]
                            dst[o + 3] = src[w * h + cw * h + row * cw + pair]
                        }
                    }
                }
            default:
                throw PixelBufferError.unsupportedFormat(buffer.format, operation: "Y4M frames (delivered natively)")
            }
        }
    }

    func stop() {
        reader = nil
        mjpegFrames = []
    }
}
