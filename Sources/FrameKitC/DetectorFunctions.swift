import CFrameKitAPI
import Foundation
import FrameKit

@_cdecl("fk_detector_options_init")
public func fkDetectorOptionsInit(_ options: UnsafeMutablePointer<fk_detector_options>?) {
    let defaults = FaceDetector.Options()
    options?.pointee = fk_detector_options(
        input_size: Int32(defaults.inputSize), score_threshold: defaults.scoreThreshold, overlap_threshold: defaults.overlapThreshold,
        min_face_size: 0, max_face_size: 0)
}

@_cdecl("fk_detector_new")
public func fkDetectorNew(
    _ modelPath: UnsafePointer<CChar>?, _ options: UnsafePointer<fk_detector_options>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    out?.pointee = nil
    return reporting(error) {
        guard let out else { throw InvalidArgument("out is NULL") }
        var settings = FaceDetector.Options()
        if let given = options?.pointee {
            settings = FaceDetector.Options(
                inputSize: Int(given.input_size), scoreThreshold: given.score_threshold, overlapThreshold: given.overlap_threshold,
                minFaceSize: given.min_face_size > 0 ? Int(given.min_face_size) : nil,
                maxFaceSize: given.max_face_size > 0 ? Int(given.max_face_size) : nil)
        }
        let model = modelPath.map { URL(fileURLWithPath: String(cString: $0)) }
        out.pointee = Handle.make(try FaceDetector(modelURL: model, options: settings))
    }
}

@_cdecl("fk_detect")
public func fkDetect(
    _ detector: OpaquePointer?, _ frame: OpaquePointer?, _ faces: UnsafeMutablePointer<UnsafeMutablePointer<fk_face>?>?,
    _ count: UnsafeMutablePointer<Int>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    handOutFaces(detector, frame, faces, count, error) { detector, pixels in try detector.detect(in: pixels, region: nil) }
}

@_cdecl("fk_detect_full_resolution")
public func fkDetectFullResolution(
    _ detector: OpaquePointer?, _ frame: OpaquePointer?, _ faces: UnsafeMutablePointer<UnsafeMutablePointer<fk_face>?>?,
    _ count: UnsafeMutablePointer<Int>?, _ error: UnsafeMutablePointer<fk_error>?
) -> fk_status {
    handOutFaces(detector, frame, faces, count, error) { detector, pixels in try detector.detectAtFullResolution(in: pixels) }
}

/// The body both detect calls share: the outputs cleared, the handles checked, `search`'s faces
/// handed out.
private func handOutFaces(
    _ detector: OpaquePointer?, _ frame: OpaquePointer?, _ faces: UnsafeMutablePointer<UnsafeMutablePointer<fk_face>?>?,
    _ count: UnsafeMutablePointer<Int>?, _ error: UnsafeMutablePointer<fk_error>?,
    _ search: (FaceDetector, PixelBuffer) throws -> [Face]
) -> fk_status {
    faces?.pointee = nil
    count?.pointee = 0
    return reporting(error) {
        let detector = try Handle.object(detector, as: FaceDetector.self, "detector")
        let pixels = try FrameHandle.from(frame).pixels
        guard let faces, let count else { throw InvalidArgument("faces or count is NULL") }
        FaceList.handOut(try search(detector, pixels), to: faces, count: count)
    }
}

@_cdecl("fk_detector_free")
public func fkDetectorFree(_ detector: OpaquePointer?) { Handle.release(detector) }
