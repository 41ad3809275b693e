import Dispatch
import Foundation
import FrameKit
import FrameProcessors
import FrameTestSupport
import Synchronization
import Testing

/// `image` (RGB24) laid over `frame` (RGB24) with its top-left at `x`, `y`; what falls outside
/// the frame is left out.
func paste(_ image: PixelBuffer, into frame: inout PixelBuffer, x: Int, y: Int) {
    let (width, height) = (frame.width, frame.height)
    image.withUnsafeBytes(ofPlane: 0) { s, sp in
        frame.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
            for row in 0..<image.height where y + row >= 0 && y + row < height {
                for column in 0..<image.width where x + column >= 0 && x + column < width {
                    for c in 0..<3 { d[(y + row) * dp.bytesPerRow + (x + column) * 3 + c] = s[row * sp.bytesPerRow + column * 3 + c] }
                }
            }
        }
    }
}

/// A 640x360 NV12 video: the astronaut's head over the coffee photo, at `positions` (top-left
/// of the 200x200 head crop; nil: no face in that frame). Returns frames and face boxes.
///
/// `pan`: the camera's offset in each frame (px; the coffee photo drawn wider and shifted by
/// it, the face where `positions` says). `plain`: a uniform gray scene instead of the photo.
func astronautVideo(
    _ positions: [(Int, Int)?], pan: [Int]? = nil, plain: Bool = false
) throws -> (frames: [PixelBuffer], faces: [Rect?]) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    let head = try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200))
    var scene = try PixelBuffer(width: 640 + (pan?.max() ?? 0), height: 360, format: .rgb24)
    if plain {
        scene.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 128) }
    } else {
        try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
    }
    var frames: [PixelBuffer] = []
    var faces: [Rect?] = []
    for (n, position) in positions.enumerated() {
        var frame = try scene.cropped(to: Rect(x: pan?[n] ?? 0, y: 0, width: 640, height: 360)).copy()
        if let (x, y) = position {
            paste(head, into: &frame, x: x, y: y)
            // The face in the head crop: about x 50…150, y 50…165.
            faces.append(Rect(x: x + 50, y: y + 48, width: 100, height: 115))
        } else {
            faces.append(nil)
        }
        frames.append(try PixelFormatConversion.convert(frame, to: .nv12VideoRange))
    }
    return (frames, faces)
}

/// How many times `regions` (passes in order, nil: the whole frame) looked at all `tiles`
/// distinct tiles back to back, with no whole-frame pass between: a sweep in one job. Tiles
/// taking turns with whole-frame passes count for none.
func backToBackSweeps(_ regions: [Rect?], tiles: Int) -> Int {
    var sweeps = 0
    var run = Set<Rect>()
    for region in regions {
        guard let region, !run.contains(region) else {
            run = region.map { [$0] } ?? []
            continue
        }
        run.insert(region)
        if run.count == tiles {
            sweeps += 1
            run = []
        }
    }
    return sweeps
}

/// A 1280x720 NV12 frame: three astronaut heads of 200 px on the coffee photo, and their faces.
func threeFaceScene() throws -> (frame: PixelBuffer, faces: [Rect]) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    let head = try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200))
    var scene = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &scene)
    let xs = [100, 540, 980]
    for x in xs { paste(head, into: &scene, x: x, y: 260) }
    return (
        try PixelFormatConversion.convert(scene, to: .nv12VideoRange), xs.map { Rect(x: $0 + 50, y: 260 + 48, width: 100, height: 115) }
    )
}

/// A uniform gray 1280x720 NV12 frame: a cut to a blank wall.
func grayWall() throws -> PixelBuffer {
    var blank = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    blank.withUnsafeMutableBytes(ofPlane: 0) { d, _ in _ = d.initializeMemory(as: UInt8.self, repeating: 128) }
    return try PixelFormatConversion.convert(blank, to: .nv12VideoRange)
}

/// A 1280x720 NV12 frame: the astronaut's head shrunk to 52 px (her face, `truth`, ~26 px)
/// on the coffee photo; and the photo alone.
func smallFaceScene() throws -> (withFace: PixelBuffer, empty: PixelBuffer, truth: Rect) {
    let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
    var head = try PixelBuffer(width: 52, height: 52, format: .rgb24)
    try Resize.bilinear(try photo.cropped(to: Rect(x: 124, y: 10, width: 200, height: 200)).copy(), into: &head)
    var empty = try PixelBuffer(width: 1280, height: 720, format: .rgb24)
    try Resize.bilinear(try PixelBuffer(contentsOf: Fixtures.coffee), into: &empty)
    var scene = empty.copy()
    paste(head, into: &scene, x: 700, y: 400)
    return (
        try PixelFormatConversion.convert(scene, to: .nv12VideoRange), try PixelFormatConversion.convert(empty, to: .nv12VideoRange),
        Rect(x: 700 + 13, y: 400 + 12, width: 26, height: 30)
    )
}

extension FaceTracker.Options {
    /// The background schedule with passes back to back whatever the scene (tests of the
    /// scheduler and the budget: their detectors find nothing, a quiet scene).
    static var backToBack: Self {
        var options = Self(schedule: .background)
        options.quietInterval = 1
        return options
    }
}
