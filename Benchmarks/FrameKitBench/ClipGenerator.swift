import Foundation
import FrameKit

/// Test clips with ground truth, made from real photos: scikit-image's `coffee` (no face) as
/// the background, scaled to the frame, and crops of `astronaut` (one real face, at two sizes
/// and mirrored) moving over it as a camera would see faces move — or, for the second clip,
/// jumping to new places every frame.
struct Clip {
    var width: Int
    var height: Int
    var frameRate: Double
    var frames: [PixelBuffer]           // NV12 (video range), as a camera delivers
    var truth: [[Rect]]                  // per frame, where the faces are (detector boxes)
}

enum ClipGenerator {
    struct Sprite {
        var image: PixelBuffer           // NV12
        var faceBox: Rect                // where the detector finds the face inside the sprite
    }

    static func sprites(face: PixelBuffer, detector: FaceDetector) throws -> [Sprite] {
        var result: [Sprite] = []
        for (height, mirrored) in [(260, false), (200, true), (230, false)] {
            let width = (face.width * height / face.height) & ~1
            var rgb = try PixelBuffer(width: width, height: height & ~1, format: .rgb24)
            try Resize.bilinear(face, into: &rgb)
            if mirrored { rgb = try Transform.apply(rgb, rotation: .none, mirrored: true) }
            // The detector's box on the sprite alone, framed by a grey border like the scene.
            var padded = try PixelBuffer(width: width + 200, height: (height & ~1) + 200, format: .rgb24)
            padded.withUnsafeMutableBytes(ofPlane: 0) { b, _ in _ = b.initializeMemory(as: UInt8.self, repeating: 110) }
            blit(rgb, into: &padded, at: (100, 100))
            let found = try detector.detect(in: padded)
            guard let box = found.max(by: { $0.bounds.area < $1.bounds.area })?.bounds else {
                throw RuntimeError("the face sprite of height \(height) has no detectable face")
            }
            result.append(Sprite(image: try PixelFormatConversion.convert(rgb, to: .nv12VideoRange),
                                 faceBox: Rect(x: box.x - 100, y: box.y - 100, width: box.width, height: box.height)))
        }
        return result
    }

    /// `moving`: smooth paths; otherwise new random places every frame.
    static func make(frames count: Int, width: Int, height: Int, moving: Bool, face: PixelBuffer, background: PixelBuffer,
                     detector: FaceDetector) throws -> Clip {
        let sprites = try sprites(face: face, detector: detector)
        var scene = try PixelBuffer(width: width, height: height, format: .rgb24)
        try Resize.bilinear(background, into: &scene)
        let base = try PixelFormatConversion.convert(scene, to: .nv12VideoRange)
        var generator = SeededGenerator(seed: 42)
        var frames: [PixelBuffer] = [], truth: [[Rect]] = []
        for n in 0..<count {
            var frame = base.copy()
            var boxes: [Rect] = []
            let t = Double(n) / 30
            for (k, sprite) in sprites.enumerated() {
                let maxX = width - sprite.image.width, maxY = height - sprite.image.height
                var x: Int, y: Int
                let laneWidth = width / sprites.count
                if moving {
                    // Each face in its own third of the frame, drifting smoothly (about 100 px/s).
                    let amplitude = Double(max(0, laneWidth - sprite.image.width)) / 2
                    let centre = Double(k * laneWidth + laneWidth / 2 - sprite.image.width / 2)
                    x = Int(centre + amplitude * sin(2 * .pi * t / (3 + Double(k))))
                    y = Int(Double(maxY) * (0.5 + 0.45 * sin(2 * .pi * t / (4.3 + Double(k)) + Double(k))))
                } else {
                    // A new place every frame, in the face's own third (faces never overlap).
                    x = k * laneWidth + Int.random(in: 0...max(0, laneWidth - sprite.image.width), using: &generator)
                    y = Int.random(in: 0...maxY, using: &generator)
                }
                x = max(0, min(maxX, x)) & ~1
                y = max(0, min(maxY, y)) & ~1
                try blitNV12(sprite.image, into: &frame, at: (x, y))
                boxes.append(Rect(x: x + sprite.faceBox.x, y: y + sprite.faceBox.y, width: sprite.faceBox.width, height: sprite.faceBox.height))
            }
            frames.append(frame)
            truth.append(boxes)
        }
        return Clip(width: width, height: height, frameRate: 30, frames: frames, truth: truth)
    }

    static func blit(_ sprite: PixelBuffer, into target: inout PixelBuffer, at origin: (Int, Int)) {
        let bpp = sprite.plane(0).bytesPerPixel
        sprite.withUnsafeBytes(ofPlane: 0) { src, sp in
            target.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                for row in 0..<sp.height {
                    (dst.baseAddress! + (origin.1 + row) * dp.bytesPerRow + origin.0 * bpp)
                        .copyMemory(from: src.baseAddress! + row * sp.bytesPerRow, byteCount: sp.width * bpp)
                }
            }
        }
    }

    static func blitNV12(_ sprite: PixelBuffer, into target: inout PixelBuffer, at origin: (Int, Int)) throws {
        for plane in 0..<2 {
            let div = plane == 0 ? 1 : 2
            sprite.withUnsafeBytes(ofPlane: plane) { src, sp in
                target.withUnsafeMutableBytes(ofPlane: plane) { dst, dp in
                    for row in 0..<sp.height {
                        (dst.baseAddress! + (origin.1 / div + row) * dp.bytesPerRow + (origin.0 / div) * sp.bytesPerPixel)
                            .copyMemory(from: src.baseAddress! + row * sp.bytesPerRow, byteCount: sp.width * sp.bytesPerPixel)
                    }
                }
            }
        }
    }

    /// Writes the clip as MJPEG (for `framekit detect --input`).
    static func writeMJPEG(_ clip: Clip, to url: URL) throws {
        let encoder = try JPEG.Encoder()
        var data = Data()
        for frame in clip.frames { data.append(contentsOf: try encoder.encode(frame, quality: 90)) }
        try data.write(to: url)
    }
}

/// Recall and precision of detections against ground truth (a match is IoU ≥ 0.5).
struct Accuracy: Codable {
    var truePositives = 0
    var falsePositives = 0
    var falseNegatives = 0
    var recall: Double { truePositives + falseNegatives == 0 ? 1 : Double(truePositives) / Double(truePositives + falseNegatives) }
    var precision: Double { truePositives + falsePositives == 0 ? 1 : Double(truePositives) / Double(truePositives + falsePositives) }

    mutating func add(found: [Rect], truth: [Rect]) {
        var unmatched = truth
        for f in found {
            if let i = unmatched.indices.max(by: { unmatched[$0].iou(f) < unmatched[$1].iou(f) }), unmatched[i].iou(f) >= 0.5 {
                truePositives += 1
                unmatched.remove(at: i)
            } else {
                falsePositives += 1
            }
        }
        falseNegatives += unmatched.count
    }
}

struct RuntimeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A small deterministic generator, so clips are the same in every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
