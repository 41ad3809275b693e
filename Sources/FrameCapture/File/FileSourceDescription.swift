import Foundation
import FrameCore
import FrameImageIO

/// What a file source is, read from its header when the device is made (so an unreadable
/// header is an error naming the file, before any session starts).
struct FileSourceDescription: Sendable {
    enum Kind: String, Sendable {
        case y4m = "y4m"
        case mjpeg = "mjpeg"
        case images = "images"
    }

    let url: URL
    let kind: Kind
    let size: FrameSize
    let pixelFormat: PixelFormat
    let frameRate: Double
    let realTime: Bool
    /// Y4M: where the first frame starts and the header's colour description.
    let y4m: Y4MHeader?
    /// Image folders: the files in order.
    let imageFiles: [URL]

    /// The media's length at its frame rate: an image folder's images, a Y4M file's frames (its
    /// size over a frame's, with the usual 6-byte `FRAME` line); nil for MJPEG, whose frames are
    /// not counted before they are read.
    var duration: Double? {
        switch kind {
        case .images: return Double(imageFiles.count) / frameRate
        case .mjpeg: return nil
        case .y4m:
            guard let y4m, let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                let bytes = (attributes[.size] as? NSNumber)?.intValue
            else { return nil }
            return Double(max(0, bytes - y4m.headerLength) / (y4m.frameBytes + 6)) / frameRate
        }
    }

    var deviceFormat: CaptureDeviceFormat {
        // JPEG-based sources decode into whatever format the output asks for; `pixelFormat` is
        // their default (the images' own for PGM/PPM and gray JPEGs).
        CaptureDeviceFormat(
            fourCC: kind.rawValue.uppercased(), pixelFormat: pixelFormat,
            isCompressed: kind != .y4m, size: size, frameRates: [frameRate])
    }

    init(url: URL, realTime: Bool, frameRate: Double?) throws(CaptureError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw .unreadableFile(path: url.path, reason: "no such file or folder")
        }
        // A FIFO or a device would block the header read forever (or be read as a file by
        // mistake): refused with the reason, never a silent wait.
        var info = stat()
        if stat(url.path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG, S_IFDIR: break
            case S_IFIFO: throw .unreadableFile(path: url.path, reason: "it is a FIFO (a pipe); --input reads regular files and folders")
            case S_IFCHR:
                throw .unreadableFile(path: url.path, reason: "it is a character device; a camera is opened with --device, not --input")
            default: throw .unreadableFile(path: url.path, reason: "not a regular file or folder")
            }
        }
        if isDirectory.boolValue {
            let names: [String]
            do { names = try FileManager.default.contentsOfDirectory(atPath: url.path) } catch {
                throw .unreadableFile(path: url.path, reason: "cannot list the folder (permission denied?)")
            }
            let images = names.filter { Self.imageExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
                .sorted().map { url.appendingPathComponent($0) }
            guard !images.isEmpty else {
                // A folder of videos is the likeliest mistake: say what was there and what a folder is.
                let others = names.filter { !$0.hasPrefix(".") }.sorted()
                let found =
                    others.first.map {
                        "its \(others.count) other file(s), '\($0)' first, are not read: each video file is an input of its own"
                    }
                    ?? "it is empty"
                throw .unreadableFile(
                    path: url.path, reason: "no JPEG, PNG, PGM or PPM images in the folder (a folder is read as photos; \(found))")
            }
            try self.init(url: url, realTime: realTime, frameRate: frameRate, images: images)
            return
        }
        let head: [UInt8]
        do {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            head = [UInt8](try handle.read(upToCount: 4096) ?? Data())
        } catch {
            throw .unreadableFile(path: url.path, reason: "cannot open (permission denied?)")
        }
        if head.starts(with: Array("YUV4MPEG2".utf8)) {
            let header = try Y4MHeader(parsing: head, path: url.path)
            // Refused here, naming the file (a data error), not later when a buffer of that
            // size cannot be made.
            guard header.size.width * header.size.height <= PixelBuffer.pixelBudget else {
                throw .unreadableFile(
                    path: url.path,
                    reason:
                        "\(header.size.width)x\(header.size.height) is over the pixel budget (PixelBuffer.pixelBudget: \(PixelBuffer.pixelBudget) pixels)"
                )
            }
            try self.init(
                url: url, realTime: realTime, kind: .y4m, size: header.size, pixelFormat: header.pixelFormat,
                frameRate: frameRate ?? header.frameRate, y4m: header, imageFiles: [])
        } else if JPEG.hasSignature(head) {
            // One JPEG, or a stream of them (MJPEG): the first frame with a readable header
            // within the pixel budget gives the size (a damaged or forged first frame is then a
            // corrupt drop, not the end of the input). Only a frame's head is read.
            let reader = try FileReader(path: url.path)
            let frames = reader.jpegRanges(limit: Self.framesTriedForSize)
            var found: JPEG.Header?
            var problem = "no JPEG frame"
            var bytes: [UInt8] = []
            for range in frames {
                reader.read(at: range.lowerBound, count: min(range.count, Self.headBytes), into: &bytes)
                do {
                    let candidate = try JPEG.header(of: bytes)
                    guard candidate.width.multipliedReportingOverflow(by: candidate.height).partialValue <= PixelBuffer.pixelBudget
                    else {
                        problem = "\(candidate.width)x\(candidate.height) is over the pixel budget (PixelBuffer.pixelBudget)"
                        continue
                    }
                    found = candidate
                    break
                } catch {
                    problem = "unreadable JPEG header: \(error)"
                }
            }
            guard let header = found else {
                throw .unreadableFile(path: url.path, reason: frames.count > 1 ? "\(problem) in its first \(frames.count) frames" : problem)
            }
            let stream = frames.count > 1 || ["mjpeg", "mjpg"].contains(url.pathExtension.lowercased())
            // Colour decodes to NV12 planes directly, which need an even width and height; an
            // image of odd size (500x375, common among photos) decodes to RGB24 instead. A stream
            // is colour even when its first frame is gray (a gray frame decodes to neutral
            // chroma): a gray first frame delivered every later colour one as gray.
            let even = header.width.isMultiple(of: 2) && header.height.isMultiple(of: 2)
            try self.init(
                url: url, realTime: realTime, kind: stream ? .mjpeg : .images, size: FrameSize(width: header.width, height: header.height),
                pixelFormat: header.isGrayscale && !stream ? .gray8 : even ? .nv12FullRange : .rgb24, frameRate: frameRate ?? 30, y4m: nil,
                imageFiles: stream ? [] : [url])
        } else if PNM.hasSignature(head) || (PNG.hasSignature(head) && !PNG.isAnimated(head)) {
            // (An animated PNG is libavformat's: its apng demuxer reads every frame.)
            try self.init(url: url, realTime: realTime, frameRate: frameRate, images: [url])
        } else {
            throw .unreadableFile(path: url.path, reason: Self.notOurs)
        }
    }

    /// Images, a frame each: the first gives the size and format — colour (RGB24) wherever
    /// there is more than one image, as an MJPEG's: a gray first image delivered every later
    /// colour one as gray (a gray image in colour has neutral chroma). Only a single gray image
    /// comes as gray.
    private init(url: URL, realTime: Bool, frameRate: Double?, images: [URL]) throws(CaptureError) {
        let image = try Self.readImage(images[0])
        try self.init(
            url: url, realTime: realTime, kind: .images, size: FrameSize(width: image.width, height: image.height),
            pixelFormat: image.format == .gray8 && images.count > 1 ? .rgb24 : image.format, frameRate: frameRate ?? 30, y4m: nil,
            imageFiles: images)
    }

    private init(
        url: URL, realTime: Bool, kind: Kind, size: FrameSize, pixelFormat: PixelFormat, frameRate: Double, y4m: Y4MHeader?,
        imageFiles: [URL]
    ) throws(CaptureError) {
        guard frameRate > 0 && frameRate <= 1000 else {
            throw .unreadableFile(path: url.path, reason: "frame rate \(frameRate) out of range")
        }
        self.url = url
        self.realTime = realTime
        self.kind = kind
        self.size = size
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.y4m = y4m
        self.imageFiles = imageFiles
    }

    /// The image extensions FrameKit's own readers take in a folder.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "pgm", "ppm", "pnm"]

    /// How many of an MJPEG's first frames are tried for its size, and how much of each is read.
    static let framesTriedForSize = 8
    static let headBytes = 256 * 1024

    /// The largest JPEG of this size worth reading: libjpeg-turbo's bound for the pixels plus
    /// room for metadata. A bigger "frame" is not a frame of this stream (a corrupt drop, never a
    /// read of gigabytes into memory).
    static func maximumFrameBytes(_ size: FrameSize) -> Int { size.width * size.height * 6 + (4 << 20) }

    /// The reason for content FrameKit's own readers do not know (`CaptureDevice.file` then
    /// hands the file to libavformat).
    static let notOurs = "not a Y4M, MJPEG, JPEG, PNG, PGM or PPM file"

    private static func readImage(_ url: URL) throws(CaptureError) -> PixelBuffer {
        do { return try PixelBuffer(contentsOf: url) } catch {
            throw .unreadableFile(path: url.path, reason: error.description)
        }
    }
}

extension FileSourceDescription: FrameSourceFactory {
    var isRealTime: Bool { realTime }
    func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
        try FileSource(description: self, configuration: configuration)
    }
}
