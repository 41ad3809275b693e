import Foundation
import FrameKit
import FrameKitCommands
import FrameTestSupport

/// Renders the corpus's clips: real face photos (head and shoulders, feathered into the scene)
/// over real photos, moved, scaled, covered and degraded as each ``ClipKind`` says. Everything
/// follows from the seed: the same clip in every run.
enum ClipRenderer {
    static func render(kind: ClipKind, seed: UInt64, frames count: Int, corpus: Corpus, split: Corpus.Split) throws -> Clip {
        if kind == .cuts {
            var first = try render(kind: .crowdPan, seed: seed, frames: count / 2, corpus: corpus, split: split)
            let second = try render(kind: .crowd, seed: seed &+ 7919, frames: count - count / 2, corpus: corpus, split: split)
            first.kind = .cuts
            first.mjpeg += second.mjpeg
            first.truth += second.truth
            return first
        }
        if kind == .photos { return try renderPhotos(seed: seed, count: count, corpus: corpus, split: split) }
        if kind == .slideshow {
            // The photos, each held for half a second (15 frames): a video whose every cut is a
            // new picture.
            let held = 15
            let photos = try renderPhotos(seed: seed, count: (count + held - 1) / held, corpus: corpus, split: split)
            let bytes = [UInt8](photos.mjpeg)
            var clip = photos
            (clip.kind, clip.mjpeg, clip.truth) = (.slideshow, Data(), [])
            var start = 0
            for (n, end) in Clip.frameEnds(bytes).enumerated() {
                for _ in 0..<held where clip.truth.count < count {
                    clip.mjpeg.append(contentsOf: bytes[start..<end])
                    clip.truth.append(photos.truth[n])
                }
                start = end
            }
            return clip
        }
        var random = SeededGenerator(seed: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(ClipKind.allCases.firstIndex(of: kind)!))
        let (width, height) = kind == .fullHD ? (1920, 1080) : (1280, 720)
        let people = corpus.faces[split]!
        let isCrowd = kind == .crowd || kind == .crowdPan || kind == .crowdSweep
        // A panning camera: the scene (background and faces) is drawn shifted by up to `pan` px
        // (a sweep: from -pan to pan, 8 px a frame).
        let sweep = kind == .crowdSweep
        let pan = kind == .crowdPan ? 120 : sweep ? 4 * count : 0
        let background = try cover(
            corpus.backgrounds[Int.random(in: 0..<corpus.backgrounds.count, using: &random)], width: width + 2 * pan,
            height: height + 2 * pan)

        // The actors: each a face photo (maybe mirrored), a path and a size over time.
        // A sweep's group is as much wider than the frame as the sweep, as many faces a row more.
        let sceneWidth = Double(sweep ? width + 2 * pan : width)
        let faceCount =
            isCrowd
            ? Int(Double(Int.random(in: 8...14, using: &random)) * sceneWidth / Double(width)) : Int.random(in: 2...3, using: &random)
        let lane = width / faceCount
        var actors: [Actor] = []
        let rows = isCrowd ? Int.random(in: 2...3, using: &random) : 1
        let perRow = (faceCount + rows - 1) / rows
        for k in 0..<faceCount {
            var photo = people[Int.random(in: 0..<people.count, using: &random)]
            if Bool.random(using: &random) { photo = try mirrored(photo) }
            let size = Double.random(in: isCrowd ? 20...60 : 64...200, using: &random) * Double(height) / 720
            var actor = Actor(
                photo: photo, lane: (k * lane, lane), baseSize: size,
                phase: Double.random(in: 0..<(2 * .pi), using: &random),
                speed: Double.random(in: 0.6...1.4, using: &random))
            if isCrowd {
                // Rows across the middle 80% of the frame, each face a little off the grid.
                let row = k / perRow
                let column = k % perRow
                actor.seat = (
                    // (A sweep's across all of the scene: they come into view and leave it.)
                    sceneWidth * (sweep ? 0 : 0.1) + sceneWidth * (sweep ? 1 : 0.8) * (Double(column) + 0.5) / Double(perRow)
                        - (sceneWidth - Double(width)) / 2 + Double.random(in: -15...15, using: &random),
                    Double(height) * (0.3 + 0.4 * (Double(row) + 0.5) / Double(rows)) + Double.random(in: -10...10, using: &random)
                )
            }
            actors.append(actor)
        }
        // A distractor: a patch of a background photo with no face (the cat in chelsea has one
        // that is not human), moving about.
        let distractorSource = corpus.backgrounds[Int.random(in: 0..<corpus.backgrounds.count, using: &random)]
        let dSide = Int(Double(height) * Double.random(in: 0.18...0.3, using: &random))
        let distractor = try cover(
            try distractorSource.cropped(
                to: Rect(
                    x: distractorSource.width / 4, y: distractorSource.height / 6,
                    width: distractorSource.width / 2, height: distractorSource.height / 2)),
            width: dSide, height: dSide)
        let quality = kind == .lowQuality ? Int.random(in: 50...75, using: &random) : Int.random(in: 85...95, using: &random)
        let encoder = try JPEG.Encoder()
        var mjpeg = Data()
        var truth: [[TruthFace]] = []
        var noise = SeededGenerator(seed: seed ^ 0xA5A5)

        for n in 0..<count {
            let t = Double(n) / 30
            // The camera's offset (crowd-pan: about 4 px a frame at its fastest; crowd-sweep: 8).
            let panX = sweep ? Double(8 * n - pan) : Double(pan) * 0.95 * sin(t * 1.0)
            let panY = sweep ? 0 : Double(pan) * 0.4 * sin(t * 0.7 + 1)
            var frame =
                pan == 0
                ? background.copy()
                : try background.cropped(
                    to: Rect(x: pan + Int(panX.rounded()), y: pan + Int(panY.rounded()), width: width, height: height)
                ).copy()
            // Distractor first (faces may pass in front of it).
            let dx = Int(Double(width - dSide) * (0.5 + 0.45 * sin(t * 0.9 + Double(seed % 7))))
            let dy = Int(Double(height - dSide) * (0.5 + 0.45 * cos(t * 0.7)))
            blit(distractor, into: &frame, at: (dx, dy))

            var boxes: [(Rect, Double)] = [] // box, visible fraction before occlusion
            for (k, actor) in actors.enumerated() {
                var size = actor.baseSize
                var cx: Double
                var cy: Double
                switch kind {
                case .crowd, .crowdPan, .crowdSweep:
                    // Swaying a little in place; the camera's pan moves every face with the scene.
                    let seat = actor.seat!
                    cx = seat.0 + 2 * sin(t * actor.speed + actor.phase) - panX
                    cy = seat.1 + 1.5 * cos(t * 0.8 * actor.speed + actor.phase) - panY
                case .newEveryFrame:
                    size = Double.random(in: 64...200, using: &random) * Double(height) / 720
                    cx = Double(actor.lane.0) + Double.random(in: 0.3...0.7, using: &random) * Double(actor.lane.1)
                    cy = Double.random(in: 0.25...0.75, using: &random) * Double(height)
                case .enterLeave:
                    // Across the whole frame, edge to edge, each face in its own band of rows.
                    let period = 5.0 / actor.speed
                    let u = ((t + actor.phase).truncatingRemainder(dividingBy: period)) / period
                    cx = -size + u * (Double(width) + 2 * size)
                    if k % 2 == 1 { cx = Double(width) - cx }
                    cy = Double(height) * (Double(k) + 0.5) / Double(actors.count)
                case .sizes:
                    size = (40 + 260 * (0.5 + 0.5 * sin(t * 1.3 * actor.speed + actor.phase))) * Double(height) / 720
                    if k > 0 { size = min(size, Double(actor.lane.1) * 0.55) }
                    cx = Double(actor.lane.0) + Double(actor.lane.1) / 2 + 0.15 * Double(actor.lane.1) * sin(t * 0.5 + actor.phase)
                    cy = Double(height) * (0.5 + 0.15 * cos(t * 0.4 + actor.phase))
                default:
                    let amplitude = max(0, Double(actor.lane.1) - size * 1.6) / 2
                    cx = Double(actor.lane.0) + Double(actor.lane.1) / 2 + amplitude * sin(t * actor.speed + actor.phase)
                    cy = Double(height) * (0.5 + 0.3 * sin(t * 0.8 * actor.speed + 2 * actor.phase))
                }
                let box = try paste(actor.photo, faceHeight: size, faceCentre: (cx, cy), into: &frame)
                let visible = Double(box.clamped(width: width, height: height).area) / Double(max(1, box.area))
                if visible > 0 { boxes.append((box, visible)) }
            }

            // A bar of another photo sliding over the faces.
            var occluder: Rect? = nil
            if kind == .enterLeave {
                let barWidth = Int(Double(width) * 0.09)
                let x = Int((t * 0.35).truncatingRemainder(dividingBy: 1) * Double(width + barWidth)) - barWidth
                let bar = Rect(x: x, y: 0, width: barWidth, height: height).clamped(width: width, height: height)
                if bar.width > 0 {
                    let patch = try cover(
                        try distractorSource.cropped(
                            to: Rect(
                                x: 0, y: 0, width: max(2, distractorSource.width / 8),
                                height: distractorSource.height)),
                        width: bar.width, height: bar.height)
                    blit(patch, into: &frame, at: (bar.x, bar.y))
                    occluder = bar
                }
            }
            truth.append(
                boxes.map { box, visible in
                    let covered = occluder.map { Double($0.intersection(box).area) / Double(max(1, box.area)) } ?? 0
                    // Ignored: less than 60% of it visible (cut by the frame's edge or covered).
                    return TruthFace(box: box.clamped(width: width, height: height), ignored: visible * (1 - covered) < 0.6)
                })

            if kind == .webcam { degrade(&frame, t: t, noise: &noise) }
            mjpeg.append(contentsOf: try encoder.encode(frame, quality: quality))
        }
        return Clip(kind: kind, seed: seed, width: width, height: height, jpegQuality: quality, mjpeg: mjpeg, truth: truth)
    }

    /// `photos`: every frame an unrelated 1600x1200 picture (a new background, framed anew),
    /// half of them groups (4–14 faces of 20–80 px) and half portraits (1–3 faces of 60–320 px),
    /// each face placed where it overlaps no other's head and shoulders.
    static func renderPhotos(seed: UInt64, count: Int, corpus: Corpus, split: Corpus.Split) throws -> Clip {
        var random = SeededGenerator(seed: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(ClipKind.allCases.firstIndex(of: .photos)!))
        let (width, height) = (1600, 1200)
        let people = corpus.faces[split]!
        let quality = Int.random(in: 85...95, using: &random)
        let encoder = try JPEG.Encoder()
        var mjpeg = Data()
        var truth: [[TruthFace]] = []
        for _ in 0..<count {
            let source = corpus.backgrounds[Int.random(in: 0..<corpus.backgrounds.count, using: &random)]
            let part = Double.random(in: 0.5...1, using: &random)
            let (cw, ch) = (Int(Double(source.width) * part), Int(Double(source.height) * part))
            let crop = Rect(
                x: Int.random(in: 0...(source.width - cw), using: &random), y: Int.random(in: 0...(source.height - ch), using: &random),
                width: cw, height: ch)
            var frame = try cover(try source.cropped(to: crop), width: width, height: height)
            let group = Bool.random(using: &random)
            let faces = group ? Int.random(in: 4...14, using: &random) : Int.random(in: 1...3, using: &random)
            let sizes: ClosedRange<Double> = group ? 20...80 : 60...320
            var taken: [Rect] = []
            var boxes: [TruthFace] = []
            for _ in 0..<faces {
                // Log-uniform: as many faces of 20–40 px as of 40–80.
                let size = exp(Double.random(in: log(sizes.lowerBound)...log(sizes.upperBound), using: &random))
                for _ in 0..<50 {
                    let cx = Double.random(in: size...(Double(width) - size), using: &random)
                    let cy = Double.random(in: size...(Double(height) - 1.5 * size), using: &random)
                    // Head and shoulders: about twice the face's width, from above the hair to below the chin.
                    let body = Rect(x: Int(cx - size), y: Int(cy - size * 0.8), width: Int(2 * size), height: Int(2.3 * size))
                    guard !taken.contains(where: { $0.intersection(body).area > 0 }) else { continue }
                    taken.append(body)
                    var photo = people[Int.random(in: 0..<people.count, using: &random)]
                    if Bool.random(using: &random) { photo = try mirrored(photo) }
                    let box = try paste(photo, faceHeight: size, faceCentre: (cx, cy), into: &frame)
                    boxes.append(TruthFace(box: box.clamped(width: width, height: height), ignored: false))
                    break
                }
            }
            truth.append(boxes)
            mjpeg.append(contentsOf: try encoder.encode(frame, quality: quality))
        }
        return Clip(kind: .photos, seed: seed, width: width, height: height, jpegQuality: quality, mjpeg: mjpeg, truth: truth)
    }

    struct Actor {
        var photo: Corpus.FacePhoto
        var lane: (Int, Int)
        var baseSize: Double
        var phase: Double
        var speed: Double
        /// Where the face sits in a group photo (crowd kinds), before the camera's pan.
        var seat: (Double, Double)? = nil
    }

    /// `image` scaled (bilinear) to cover `width` x `height`, centred, cropped to it.
    static func cover(_ image: PixelBuffer, width: Int, height: Int) throws -> PixelBuffer {
        let scale = max(Double(width) / Double(image.width), Double(height) / Double(image.height))
        let sw = max(width, Int((Double(image.width) * scale).rounded(.up)))
        let sh = max(height, Int((Double(image.height) * scale).rounded(.up)))
        var scaled = try PixelBuffer(width: sw, height: sh, format: .rgb24)
        try Resize.bilinear(image, into: &scaled)
        return try scaled.cropped(to: Rect(x: (sw - width) / 2, y: (sh - height) / 2, width: width, height: height)).copy()
    }

    static func mirrored(_ photo: Corpus.FacePhoto) throws -> Corpus.FacePhoto {
        var m = photo
        m.image = try Transform.apply(photo.image, rotation: .none, mirrored: true)
        m.face.x = photo.image.width - photo.face.maxX
        return m
    }

    /// Pastes the photo scaled so its face is `faceHeight` high and centred at `faceCentre`,
    /// through a feathered ellipse around head and shoulders. Returns the face's box.
    static func paste(
        _ photo: Corpus.FacePhoto, faceHeight: Double, faceCentre: (Double, Double),
        into frame: inout PixelBuffer
    ) throws -> Rect {
        let k = faceHeight / Double(photo.face.height)
        let sw = max(2, Int(Double(photo.image.width) * k))
        let sh = max(2, Int(Double(photo.image.height) * k))
        // Halved first while more than twice too large: a camera averages the light of a small
        // face, one bilinear step from 200 px to 20 px would alias it instead.
        var source = photo.image
        while source.width >= 4 * sw && source.height >= 4 * sh {
            var half = try PixelBuffer(width: source.width / 2, height: source.height / 2, format: .rgb24)
            try Resize.bilinear(source, into: &half)
            source = half
        }
        var sprite = try PixelBuffer(width: sw, height: sh, format: .rgb24)
        try Resize.bilinear(source, into: &sprite)
        let fx = Double(photo.face.x) * k
        let fy = Double(photo.face.y) * k
        let fw = Double(photo.face.width) * k
        let fh = Double(photo.face.height) * k
        let ox = Int((faceCentre.0 - fx - fw / 2).rounded())
        let oy = Int((faceCentre.1 - fy - fh / 2).rounded())
        // The ellipse: centred a little below the face's centre, wide enough for the ears and hair.
        let ex = fx + fw / 2
        let ey = fy + fh * 0.62
        let rx = fw * 0.95
        let ry = fh * 1.05
        let fw0 = frame.width
        let fh0 = frame.height
        // The rows and columns of the sprite inside the frame: none when it is wholly outside
        // (a face that has left the frame), so no range is ever made upside down.
        let rows = max(0, -oy)..<max(max(0, -oy), min(sh, fh0 - oy))
        let columns = max(0, -ox)..<max(max(0, -ox), min(sw, fw0 - ox))
        sprite.withUnsafeBytes(ofPlane: 0) { s, sp in
            frame.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
                for y in rows {
                    let sr = s.baseAddress!.assumingMemoryBound(to: UInt8.self) + y * sp.bytesPerRow
                    let dr = d.baseAddress!.assumingMemoryBound(to: UInt8.self) + (y + oy) * dp.bytesPerRow
                    let vy = (Double(y) - ey) / ry
                    for x in columns {
                        let vx = (Double(x) - ex) / rx
                        let r = (vx * vx + vy * vy).squareRoot()
                        let a = max(0, min(1, (1 - r) / 0.2))
                        guard a > 0 else { continue }
                        for c in 0..<3 {
                            let o = (x + ox) * 3 + c
                            dr[o] = UInt8((Double(sr[x * 3 + c]) * a + Double(dr[o]) * (1 - a)).rounded())
                        }
                    }
                }
            }
        }
        return Rect(x: ox + Int(fx.rounded()), y: oy + Int(fy.rounded()), width: Int(fw.rounded()), height: Int(fh.rounded()))
    }

    static func blit(_ sprite: PixelBuffer, into target: inout PixelBuffer, at origin: (Int, Int)) {
        let w = min(sprite.width, target.width - origin.0)
        let h = min(sprite.height, target.height - origin.1)
        guard w > 0, h > 0, origin.0 >= 0, origin.1 >= 0 else { return }
        sprite.withUnsafeBytes(ofPlane: 0) { src, sp in
            target.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                for row in 0..<h {
                    (dst.baseAddress! + (origin.1 + row) * dp.bytesPerRow + origin.0 * 3)
                        .copyMemory(from: src.baseAddress! + row * sp.bytesPerRow, byteCount: w * 3)
                }
            }
        }
    }

    /// A poor webcam: exposure drifting (0.55–1.45x), defocus coming and going (a 3- or 5-tap
    /// blur), sensor noise (σ ≈ 10).
    static func degrade(_ frame: inout PixelBuffer, t: Double, noise: inout SeededGenerator) {
        let gain = 1 + 0.45 * sin(t * 1.7)
        let blur = Int(2.5 + 2.5 * sin(t * 1.1 + 1)) // 0…5 px
        let w = frame.width
        let h = frame.height
        frame.withUnsafeMutableBytes(ofPlane: 0) { d, dp in
            let base = d.baseAddress!.assumingMemoryBound(to: UInt8.self)
            if blur >= 2 {
                let r = blur / 2
                var row = [Int](repeating: 0, count: w * 3)
                for y in 0..<h {
                    let p = base + y * dp.bytesPerRow
                    for x in 0..<(w * 3) { row[x] = Int(p[x]) }
                    for x in 0..<w {
                        for c in 0..<3 {
                            var sum = 0
                            var n = 0
                            for k in max(0, x - r)...min(w - 1, x + r) {
                                sum += row[k * 3 + c]
                                n += 1
                            }
                            p[x * 3 + c] = UInt8(sum / n)
                        }
                    }
                }
                var column = [Int](repeating: 0, count: h)
                for x in 0..<(w * 3) {
                    for y in 0..<h { column[y] = Int(base[y * dp.bytesPerRow + x]) }
                    for y in 0..<h {
                        var sum = 0
                        var n = 0
                        for k in max(0, y - r)...min(h - 1, y + r) {
                            sum += column[k]
                            n += 1
                        }
                        base[y * dp.bytesPerRow + x] = UInt8(sum / n)
                    }
                }
            }
            for y in 0..<h {
                let p = base + y * dp.bytesPerRow
                for x in 0..<(w * 3) {
                    // Roughly Gaussian: the sum of three uniforms.
                    let u = Int(noise.next() & 0xFF) + Int((noise.next() >> 8) & 0xFF) + Int((noise.next() >> 16) & 0xFF) - 382
                    let v = Double(p[x]) * gain + Double(u) * 0.08
                    p[x] = UInt8(max(0, min(255, v.rounded())))
                }
            }
        }
    }
}

struct RuntimeError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
