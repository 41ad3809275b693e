import Foundation
import FrameKit
import FrameKitCommands

/// The photos the evaluation clips are made of (Benchmarks/Corpus: corpus.json and its
/// README for sources, licences and the two splits).
struct Corpus {
    enum Split: String, CaseIterable, Codable { case tune, report }

    struct FacePhoto {
        var name: String
        var identity: String
        var image: PixelBuffer // RGB24
        var face: Rect // the annotated face box in `image`
    }

    var faces: [Split: [FacePhoto]]
    var backgrounds: [PixelBuffer] // RGB24
    var seeds: [Split: [UInt64]]

    private struct Spec: Decodable {
        struct Face: Decodable {
            var file: String
            var identity: String
            var split: Split
            var face: [Int]
        }
        var faces: [Face]
        var backgrounds: [String]
        var seeds: [String: [UInt64]]
    }

    init(folder: URL) throws {
        let spec = try JSONDecoder().decode(Spec.self, from: Data(contentsOf: folder.appendingPathComponent("corpus.json")))
        func rgb(_ url: URL) throws -> PixelBuffer {
            try PixelFormatConversion.convert(PixelBuffer(contentsOf: url), to: .rgb24)
        }
        var faces: [Split: [FacePhoto]] = [:]
        for f in spec.faces {
            let image = try rgb(folder.appendingPathComponent("faces").appendingPathComponent(f.file))
            faces[f.split, default: []].append(
                FacePhoto(
                    name: f.file, identity: f.identity, image: image,
                    face: Rect(x: f.face[0], y: f.face[1], width: f.face[2], height: f.face[3])))
        }
        // Different people in the two splits, or the report split would measure memory.
        let tune = Set(faces[.tune, default: []].map(\.identity))
        let report = Set(faces[.report, default: []].map(\.identity))
        guard tune.isDisjoint(with: report), !tune.isEmpty, !report.isEmpty else {
            throw RuntimeError("corpus.json: the splits must hold different people (tune \(tune), report \(report))")
        }
        self.faces = faces
        self.backgrounds = try spec.backgrounds.map { try rgb(folder.appendingPathComponent("backgrounds").appendingPathComponent($0)) }
        self.seeds = Dictionary(uniqueKeysWithValues: spec.seeds.compactMap { k, v in Split(rawValue: k).map { ($0, v) } })
    }
}

/// A clip with ground truth, as a camera would deliver it.
struct Clip {
    var kind: ClipKind
    var seed: UInt64
    var width: Int
    var height: Int
    var jpegQuality: Int
    /// MJPEG: the frames as `framekit detect --input` reads them.
    var mjpeg: Data
    var truth: [[TruthFace]]
    var name: String { "\(kind.rawValue)-\(seed)" }

    /// Writes the clip into `folder` as `framekit detect --input` takes it: `NAME.mjpeg`, or for
    /// `photos` a folder `NAME` of JPEG files (0000.jpg…). Returns what to give `--input`.
    func write(in folder: URL) throws -> URL {
        guard kind == .photos else {
            let file = folder.appendingPathComponent("\(name).mjpeg")
            try mjpeg.write(to: file)
            return file
        }
        let photos = folder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: photos)
        try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        let bytes = [UInt8](mjpeg)
        var start = 0
        for (n, end) in Self.frameEnds(bytes).enumerated() {
            try Data(bytes[start..<end]).write(to: photos.appendingPathComponent(String(format: "%04d.jpg", n)))
            start = end
        }
        return photos
    }

    /// The frames decoded as the file source decodes them (NV12 from libjpeg-turbo's 4:2:0).
    func frames() throws -> [PixelBuffer] {
        var frames: [PixelBuffer] = []
        var start = 0
        let bytes = [UInt8](mjpeg)
        for end in Self.frameEnds(bytes) {
            frames.append(try JPEG.decode(Array(bytes[start..<end]), to: .nv12VideoRange))
            start = end
        }
        return frames
    }

    static func frameEnds(_ bytes: [UInt8]) -> [Int] {
        var ends: [Int] = []
        var i = 2
        while i + 1 < bytes.count {
            if bytes[i] == 0xFF && bytes[i + 1] == 0xD9 {
                ends.append(i + 2)
                i += 4
            } else {
                i += 1
            }
        }
        return ends
    }
}

/// The kinds of clip the corpus holds (docs/performance.md describes each).
enum ClipKind: String, CaseIterable, Codable {
    /// 2–3 faces 64–200 px drifting smoothly, a distractor (a cat's face, coins) moving too.
    case moving
    /// 2–3 faces at new places and sizes in every frame.
    case newEveryFrame = "new-every-frame"
    /// Faces entering and leaving at the edges, a bar of another photo passing over them.
    case enterLeave = "enter-leave-occluded"
    /// Faces from 40 to 300 px, growing and shrinking.
    case sizes
    /// Moving faces through a poor webcam: sensor noise, defocus, exposure drifting.
    case webcam
    /// Moving faces in MJPEG of quality 50–75.
    case lowQuality = "jpeg-50-75"
    /// Moving faces at 1920x1080.
    case fullHD = "moving-1080p"
    /// A group photo: 8–14 faces of 20–60 px in two or three rows, swaying a little; a still camera.
    case crowd
    /// The group photo under a moving (panning) camera: every face moves with the scene.
    case crowdPan = "crowd-pan"
    /// An edited video: half a `crowd-pan` clip, then a cut to another scene's `crowd` (every
    /// face tracked before the cut is gone after it).
    case cuts
    /// A group wider than the frame under a camera sweeping one way across it at 8 px a frame:
    /// faces keep coming into view at one edge and leaving at the other. (Last, so that adding
    /// it changed no other kind's clips: a clip's seed counts its kind's place.)
    case crowdSweep = "crowd-sweep"
    /// A folder of photos: every frame an unrelated picture (groups of small faces, portraits),
    /// read as `framekit detect --input FOLDER` reads photos.
    case photos
    /// The `photos` as a video: each held for half a second, then a cut to the next.
    case slideshow
}
