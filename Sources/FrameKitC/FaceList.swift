import CFrameKitAPI
import FrameKit

/// Faces handed to C: an array of `fk_face` FrameKit allocates and fk_faces_free frees.
enum FaceList {
    static func handOut(_ faces: [Face], to out: UnsafeMutablePointer<UnsafeMutablePointer<fk_face>?>, count: UnsafeMutablePointer<Int>) {
        count.pointee = faces.count
        guard !faces.isEmpty else {
            out.pointee = nil
            return
        }
        let array = UnsafeMutablePointer<fk_face>.allocate(capacity: faces.count)
        for (index, face) in faces.enumerated() { (array + index).initialize(to: cFace(face)) }
        out.pointee = array
    }

    static func cFace(_ face: Face) -> fk_face {
        var result = fk_face()
        result.x = Double(face.bounds.x)
        result.y = Double(face.bounds.y)
        result.width = Double(face.bounds.width)
        result.height = Double(face.bounds.height)
        result.confidence = face.confidence ?? 1
        let points = face.landmarks.prefix(5)
        result.landmark_count = Int32(points.count)
        withUnsafeMutableBytes(of: &result.landmarks) { raw in
            let coordinates = raw.bindMemory(to: Double.self)
            for (index, point) in points.enumerated() {
                coordinates[2 * index] = point.x
                coordinates[2 * index + 1] = point.y
            }
        }
        return result
    }
}

@_cdecl("fk_faces_free")
public func fkFacesFree(_ faces: UnsafeMutablePointer<fk_face>?) { faces?.deallocate() }
