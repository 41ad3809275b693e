import CFrameKitAPI
import FrameKit

/// What an `fk_frame` is: a pixel buffer, with its timing when a source gave it.
final class FrameHandle: Sendable {
    let pixels: PixelBuffer
    let sequenceNumber: UInt64
    let presentationTime: Double

    init(_ pixels: PixelBuffer, sequenceNumber: UInt64 = 0, presentationTime: Double = 0) {
        self.pixels = pixels
        self.sequenceNumber = sequenceNumber
        self.presentationTime = presentationTime
    }

    static func from(_ pointer: OpaquePointer?) throws -> FrameHandle { try Handle.object(pointer, as: FrameHandle.self, "frame") }
}

/// framekit.h's FK_FORMAT_* codes.
enum FormatCode {
    static let formats: [PixelFormat] = [.rgb24, .bgra32, .gray8, .nv12VideoRange, .i420, .yuyv]

    static func format(_ code: Int32) throws -> PixelFormat {
        guard code >= 0, Int(code) < formats.count else { throw InvalidArgument("unknown pixel format \(code)") }
        return formats[Int(code)]
    }

    static func code(_ format: PixelFormat) -> Int32 {
        // NV12 full range is reported as NV12: the planes are laid out alike.
        Int32(formats.firstIndex(of: format == .nv12FullRange ? .nv12VideoRange : format) ?? 0)
    }
}

@_cdecl("fk_frame_wrap")
public func fkFrameWrap(
    _ data: UnsafeMutableRawPointer?, _ width: Int32, _ height: Int32, _ bytesPerRow: Int64, _ format: Int32,
    _ out: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        guard let data else { throw InvalidArgument("data is NULL") }
        guard let out else { throw InvalidArgument("out is NULL") }
        let pixelFormat = try FormatCode.format(format)
        guard pixelFormat.planeCount == 1 else {
            throw InvalidArgument("fk_frame_wrap takes one-plane formats (RGB24, BGRA32, GRAY8, YUYV)")
        }
        guard width > 0, height > 0, bytesPerRow > 0 else {
            throw InvalidArgument("a frame of \(width)x\(height), \(bytesPerRow) bytes a row")
        }
        let (byteCount, overflow) = Int(bytesPerRow).multipliedReportingOverflow(by: Int(height))
        guard !overflow else { throw InvalidArgument("\(height) rows of \(bytesPerRow) bytes overflow") }
        // The caller's memory: nothing to give back when the last reference ends. Borrowed, so
        // what keeps frames past a call (a tracker's history and passes) copies it first.
        let storage = PixelStorage(borrowing: data, byteCount: byteCount, release: { _ in })
        let pixels = try PixelBuffer(
            width: Int(width), height: Int(height), format: pixelFormat, storage: storage,
            planes: [(offset: 0, bytesPerRow: Int(bytesPerRow))])
        out.pointee = Handle.make(FrameHandle(pixels))
    }
}

@_cdecl("fk_frame_new")
public func fkFrameNew(
    _ width: Int32, _ height: Int32, _ format: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        guard let out else { throw InvalidArgument("out is NULL") }
        let pixels = try PixelBuffer(width: Int(width), height: Int(height), format: try FormatCode.format(format))
        out.pointee = Handle.make(FrameHandle(pixels))
    }
}

@_cdecl("fk_frame_get_info")
public func fkFrameGetInfo(_ frame: OpaquePointer?, _ info: UnsafeMutablePointer<fk_frame_info>?) -> fk_status {
    reporting(nil) {
        let handle = try FrameHandle.from(frame)
        guard let info else { throw InvalidArgument("info is NULL") }
        let pixels = handle.pixels
        var result = fk_frame_info()
        result.width = Int32(pixels.width)
        result.height = Int32(pixels.height)
        result.format = FormatCode.code(pixels.format)
        result.plane_count = Int32(pixels.planeCount)
        result.sequence_number = handle.sequenceNumber
        result.presentation_time = handle.presentationTime
        var planes = [fk_plane](repeating: fk_plane(), count: 3)
        for index in 0..<pixels.planeCount {
            // The address outlives the closure: the handle holds the storage until it is freed,
            // which is as long as framekit.h says the pointers are valid.
            pixels.withUnsafeBytes(ofPlane: index) { bytes, plane in
                planes[index] = fk_plane(
                    data: UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)),
                    bytes_per_row: Int64(plane.bytesPerRow), width: Int32(plane.width), height: Int32(plane.height),
                    bytes_per_pixel: Int32(plane.bytesPerPixel))
            }
        }
        result.planes = (planes[0], planes[1], planes[2])
        info.pointee = result
    }
}

@_cdecl("fk_frame_free")
public func fkFrameFree(_ frame: OpaquePointer?) { Handle.release(frame) }
