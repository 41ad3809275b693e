import Foundation
import FrameCore
import FrameImageIO
import FramePixels

/// Frames from a Y4M file, an MJPEG stream, or JPEG/PNG/PGM/PPM images.
///
/// Not real-time (the default): every frame is delivered, as fast as the consumer takes them;
/// only damaged frames drop (`corrupt`), and frames past a second's wait for a buffer a
/// consumer keeps (`outOfBuffers`, `StarvationGuard`). Real-time: frames are paced at the
/// file's frame rate and late ones drop like a camera's.
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
    /// Frames known lost (a damaged Y4M stretch): each is reported as a corrupt drop.
    private var framesLost = 0
    private var startInstant = Timestamp.now()
    /// Not real-time: how long no buffer has been free (a consumer keeping frames).
    private var starvation = StarvationGuard()

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
        starvation = StarvationGuard()
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
        let corrupt = SourceEvent.dropped(DroppedFrame(sequenceNumber: sequence, presentationTime: time, reason: .corrupt))
        if framesLost > 0 {
            framesLost -= 1
            index += 1
            return corrupt
        }
        // Not real-time: the buffer is taken before the frame is read, so a wait for one reads
        // nothing and can end in a stop.
        var waited: PixelBuffer?
        if !isRealTime, !starvation.take(from: pool, into: &waited) { return .idle }
        guard let bytes = nextFrameBytes() else { return .endOfStream }
        index += 1
        // Real-time: none free is a drop, as a camera's. (`take()`: a second reference to the
        // buffer would make the write below copy it out of the pool.)
        guard var buffer = isRealTime ? pool.makeBuffer() : waited.take() else {
            return .dropped(DroppedFrame(sequenceNumber: sequence, presentationTime: time, reason: .outOfBuffers))
        }
        do {
            switch bytes {
            case .raw(let frame):
                guard frame.count == description.y4m!.frameBytes else { return corrupt }
                try fillFromY4M(frame, into: &buffer)
            case .encoded(let frame):
                guard !frame.isEmpty else { return corrupt }
                if description.kind == .images {
                    guard try decodeImage(frame, into: &buffer) else { return corrupt }
                } else if JPEG.hasSignature(frame) {
                    try frame.withUnsafeBytes { raw in try decoder.decode(raw, into: &buffer) }
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

    /// One image of a folder (or a single image) in the configured format at its own size: a
    /// folder's photos differ (portrait and landscape, one camera and another), and each is a
    /// frame of its own size, into the pool's buffer where it is the stream's size, else into a
    /// buffer of its own. A format whose sizes are aligned (`PixelFormat.sizeAlignment`: 4:2:0
    /// even both ways, YUYV an even width) gets the image cut down to the alignment: an odd one
    /// loses its last column or row there. False: not an image FrameKit reads.
    private func decodeImage(_ frame: [UInt8], into buffer: inout PixelBuffer) throws -> Bool {
        let format = buffer.format
        let a = format.sizeAlignment
        func aligned(_ width: Int, _ height: Int) -> Bool { width % a.width == 0 && height % a.height == 0 }
        var image: PixelBuffer
        if JPEG.hasSignature(frame) {
            let header = try frame.withUnsafeBytes { raw in try decoder.header(of: raw) }
            if header.width == buffer.width && header.height == buffer.height {
                try frame.withUnsafeBytes { raw in try decoder.decode(raw, into: &buffer) }
                return true
            }
            let fits = aligned(header.width, header.height)
            image = try frame.withUnsafeBytes { raw in try decoder.decode(raw, to: fits ? format : .rgb24) }
        } else if PNG.hasSignature(frame) {
            image = try PNG.decode(frame)
        } else if PNM.hasSignature(frame) {
            image = try PNM.decode(frame)
        } else {
            return false
        }
        if !aligned(image.width, image.height) {
            let (w, h) = (image.width - image.width % a.width, image.height - image.height % a.height)
            guard w > 0, h > 0 else { return false }
            image = try image.cropped(to: Rect(x: 0, y: 0, width: w, height: h)).copy()
        }
        buffer = try PixelFormatConversion.convert(image, to: format)
        return true
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
                resynchronize(reader)
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
            guard range.count <= FileSourceDescription.maximumFrameBytes(description.size) else { return .unreadable }
            reader.read(at: range.lowerBound, count: range.count, into: &scratch)
            return .encoded(scratch)
        case .images:
            return nextImage()
        }
    }

    /// A Y4M frame header is damaged at `cursor`: finds the next `FRAME` header and counts the
    /// frames between (at the stream's frame size, at least one) as lost; with none left, every
    /// frame the rest of the file could hold is lost. The reads are bounded chunks.
    private func resynchronize(_ reader: FileReader) {
        let stride = description.y4m!.frameBytes + "FRAME\n".utf8.count
        let marker = Array("FRAME".utf8)
        var position = cursor + 1
        var chunk: [UInt8] = []
        while true {
            reader.read(at: position, count: 1 << 20, into: &chunk)
            if chunk.count < marker.count + 1 { break }
            var i = 0
            while let f = chunk[i...].firstIndex(of: marker[0]), f + marker.count < chunk.count {
                if chunk[f..<(f + marker.count)].elementsEqual(marker), chunk[f + marker.count] == 0x20 || chunk[f + marker.count] == 0x0A {
                    let found = position + f
                    framesLost = max(1, Int((Double(found - cursor) / Double(stride)).rounded())) - 1 // this call's drop is one
                    cursor = found
                    return
                }
                i = f + 1
            }
            if chunk.count < 1 << 20 { break } // the end of the file
            position += chunk.count - marker.count // overlap: a marker across two chunks
        }
        var info = stat()
        let size = stat(reader.path, &info) == 0 ? Int(info.st_size) : cursor
        framesLost = max(1, Int((Double(size - cursor) / Double(stride)).rounded())) - 1
        cursor = Int.max / 2
    }

    private func nextImage() -> FrameBytes? {
        guard cursor < description.imageFiles.count else { return nil }
        defer { cursor += 1 }
        let file = description.imageFiles[cursor]
        // An image too large to be a JPEG/PNM within the pixel budget is not read at all (each
        // image is a frame of its own size).
        let bytesOnDisk = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? nil
        guard let bytesOnDisk, bytesOnDisk <= ImageFile.maximumBytes,
            let bytes = try? Data(contentsOf: file)
        else { return .unreadable }
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
