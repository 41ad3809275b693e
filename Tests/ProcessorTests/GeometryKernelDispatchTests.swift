import Foundation
import FrameKit
import FramePixelKernels
import FramePixelKernelsAVX2
import FramePixels
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("Run-time kernel dispatch: the AVX2 build gives the baseline's bytes (resizes, filters, quarter turns)")
struct GeometryKernelDispatchTests {
    /// Taps as the resizes make them: output `i` starts near `i · scale`, a nondecreasing first
    /// pixel; weights summing to `total` (bilinear: 2048 over 2 taps) or random 12-bit ones
    /// with zeros (area: up to `taps`).
    static func randomTaps(
        outputs: Int, sourceWidth: Int, taps: Int, bilinear: Bool, using generator: inout SeededGenerator
    ) -> (first: [Int32], weights: [Int16]) {
        let scale = Double(sourceWidth) / Double(max(outputs, 1))
        var first = [Int32](repeating: 0, count: outputs)
        var weights = [Int16](repeating: 0, count: outputs * taps)
        for i in 0..<outputs {
            let start = min(Int(Double(i) * scale), sourceWidth - (bilinear ? 2 : 1))
            first[i] = Int32(max(start, 0))
            if bilinear {
                // Now and then all the weight on one side (a row's end, or a fraction rounded to 0 or 1).
                let w = i % 7 == 3 ? 2048 : i % 11 == 5 ? 0 : Int16.random(in: 0...2048, using: &generator)
                weights[2 * i] = 2048 - w
                weights[2 * i + 1] = w
            } else {
                for k in 0..<taps where Int(first[i]) + k < sourceWidth && Bool.random(using: &generator) {
                    weights[i * taps + k] = Int16.random(in: 0...4096, using: &generator)
                }
            }
        }
        return (first, weights)
    }

    @Test(
        "horizontal resampling taps (bilinear's 2, area's 4 and 6; 1 and 3 channels): both builds byte for byte, and the sums themselves",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func horizontalTapsAgree() {
        var generator = SeededGenerator(seed: 4096)
        for (taps, bilinear, channels) in [(2, true, 1), (2, true, 3), (4, false, 1), (6, false, 1)] {
            for sourceWidth in [1, 2, 15, 16, 17, 40, 129, 300, 1280] {
                for outputs in Array(
                    Set([1, 3, 16, 17, sourceWidth * 3 / 8, sourceWidth / 2, sourceWidth * 3 / 4, sourceWidth, sourceWidth + 5])
                ).sorted()
                where outputs > 0 {
                    let (first, weights) = Self.randomTaps(
                        outputs: outputs, sourceWidth: sourceWidth, taps: taps, bilinear: bilinear, using: &generator)
                    let base = FramePixelKernels.HorizontalTaps(
                        first: first, weights: weights, taps: taps, sourceWidth: sourceWidth, channels: channels)
                    let wide = FramePixelKernelsAVX2.HorizontalTaps(
                        first: first, weights: weights, taps: taps, sourceWidth: sourceWidth, channels: channels)
                    #expect(base.shuffled == 0)
                    let row = (0..<(sourceWidth * channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    let n = outputs * channels
                    // The sums by their definition, with each tap clamped into the row.
                    var want = [Int32](repeating: 0, count: n)
                    for i in 0..<outputs {
                        for c in 0..<channels {
                            for k in 0..<taps {
                                let x = min(Int(first[i]) + k, sourceWidth - 1)
                                want[i * channels + c] += Int32(row[x * channels + c]) * Int32(weights[i * taps + k])
                            }
                        }
                    }
                    var sums = ([Int32](repeating: -1, count: n + 1), [Int32](repeating: -1, count: n + 1))
                    var shifted = ([Int16](repeating: -1, count: n + 1), [Int16](repeating: -1, count: n + 1))
                    row.withUnsafeBufferPointer { r in
                        base.sums(r.baseAddress!, into: &sums.0)
                        wide.sums(r.baseAddress!, into: &sums.1)
                        if bilinear {
                            base.sumsShifted(r.baseAddress!, into: &shifted.0)
                            wide.sumsShifted(r.baseAddress!, into: &shifted.1)
                        }
                    }
                    let name =
                        "\(taps) taps, \(channels) ch, \(sourceWidth) → \(outputs) (\(wide.shuffled) shuffled, \(wide.interpolated) interpolated)"
                    #expect(Array(sums.0.prefix(n)) == want, "\(name): baseline sums")
                    #expect(sums.0 == sums.1, "\(name): the builds' sums")
                    #expect(sums.0[n] == -1 && sums.1[n] == -1, "\(name): wrote past the row")
                    if bilinear {
                        #expect(Array(shifted.0.prefix(n)) == want.map { Int16($0 >> 4) }, "\(name): baseline >> 4")
                        #expect(shifted.0 == shifted.1, "\(name): the builds' 16-bit sums")
                    }
                }
            }
        }
        // A 3/8 area resize's taps at 1280 (the bench's case) go through the shuffles nearly whole.
        let (first, weights) = Self.randomTaps(outputs: 480, sourceWidth: 1280, taps: 4, bilinear: false, using: &generator)
        let wide = FramePixelKernelsAVX2.HorizontalTaps(first: first, weights: weights, taps: 4, sourceWidth: 1280, channels: 1)
        #expect(wide.shuffled >= 480 - 32)
        // Pairs summing to 2048 with a weight outside 0…2048 are not bilinear's: the 16-bit form
        // (whose byte encoding of the weight holds only within) is not taken, and the builds agree.
        let odd = Self.randomTaps(outputs: 480, sourceWidth: 640, taps: 2, bilinear: true, using: &generator)
        var skewed = odd.weights
        (skewed[2 * 100], skewed[2 * 100 + 1]) = (2100, -52)
        (skewed[2 * 300], skewed[2 * 300 + 1]) = (-12, 2060)
        let skewedBase = FramePixelKernels.HorizontalTaps(first: odd.first, weights: skewed, taps: 2, sourceWidth: 640, channels: 1)
        let skewedWide = FramePixelKernelsAVX2.HorizontalTaps(first: odd.first, weights: skewed, taps: 2, sourceWidth: 640, channels: 1)
        let row = (0..<640).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var skewedOut = ([Int16](repeating: -1, count: 480), [Int16](repeating: -1, count: 480))
        row.withUnsafeBufferPointer { r in
            skewedBase.sumsShifted(r.baseAddress!, into: &skewedOut.0)
            skewedWide.sumsShifted(r.baseAddress!, into: &skewedOut.1)
        }
        #expect(skewedWide.interpolated == 0 && skewedOut.0 == skewedOut.1)
        // And a 3/4 bilinear resize's through the 16-bit form (8 outputs a lane), nearly whole.
        let pairs = Self.randomTaps(outputs: 960, sourceWidth: 1280, taps: 2, bilinear: true, using: &generator)
        let bilinear = FramePixelKernelsAVX2.HorizontalTaps(
            first: pairs.first, weights: pairs.weights, taps: 2, sourceWidth: 1280, channels: 1)
        #expect(bilinear.interpolated >= 960 - 16)
    }

    @Test("S / 36 rounded, halves up, by a multiply and a shift: exact for every sum a 3/4 bilinear output can have")
    func divideBy36() {
        for sum in 0...(36 * 255) {
            let want = UInt8((sum + 18) / 36)
            if FramePixelKernels.ThreeQuarterRows.divide36(UInt32(sum)) != want {
                Issue.record("S = \(sum): \(FramePixelKernels.ThreeQuarterRows.divide36(UInt32(sum))) != \(want)")
                return
            }
        }
    }

    @Test(
        "bilinear by 3/4 rows: both builds byte for byte at widths 3…300, each output the exact bilinear value rounded once, nothing written past a row",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func threeQuarterRowsAgree() {
        var generator = SeededGenerator(seed: 34)
        for count in stride(from: 3, through: 300, by: 3) {
            let width = count / 3 * 4
            // Extremes often (the sums' largest values and the rounding's halves), else random.
            let rows = (0..<4).map { _ in
                (0..<width).map { _ in
                    Bool.random(using: &generator)
                        ? UInt8.random(in: 0...255, using: &generator) : [0, 255][Int.random(in: 0...1, using: &generator)]
                }
            }
            var scratch = [UInt16](repeating: 0, count: FramePixelKernels.ThreeQuarterRows.scratchCount(count))
            func run(wide: Bool) -> [[UInt8]] {
                var (o0, o1, o2) = (
                    [UInt8](repeating: 0xA5, count: count + 1), [UInt8](repeating: 0xA5, count: count + 1),
                    [UInt8](repeating: 0xA5, count: count + 1)
                )
                if wide {
                    FramePixelKernelsAVX2.ThreeQuarterRows.resize(
                        rows[0], rows[1], rows[2], rows[3], into: &o0, &o1, &o2, count: count, scratch: &scratch)
                } else {
                    FramePixelKernels.ThreeQuarterRows.resize(
                        rows[0], rows[1], rows[2], rows[3], into: &o0, &o1, &o2, count: count, scratch: &scratch)
                }
                let outs = [o0, o1, o2]
                return outs
            }
            let (base, wide) = (run(wide: false), run(wide: true))
            #expect(base == wide, "width \(count)")
            let weights = [[5, 1], [3, 3], [1, 5]]
            for y in 0..<3 {
                #expect(base[y][count] == 0xA5 && wide[y][count] == 0xA5, "a kernel wrote past row \(y) at width \(count)")
                for x in 0..<count {
                    let (g, p) = (x / 3, x % 3)
                    var sum = 0
                    for (i, wy) in weights[y].enumerated() {
                        for (j, wx) in weights[p].enumerated() { sum += wy * wx * Int(rows[y + i][4 * g + p + j]) }
                    }
                    if base[y][x] != UInt8((sum + 18) / 36) {
                        Issue.record("width \(count) row \(y) output \(x): \(base[y][x]) != \((sum + 18) / 36)")
                        return
                    }
                }
            }
        }
    }

    @Test(
        "resize rows (bilinear blend, 2x2 mean of 1-, 3- and 4-byte pixels, area sums) and mirroring (1–4 bytes a pixel): both builds byte for byte at counts 0…130",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func resizeAndMirrorRowsAgree() {
        var generator = SeededGenerator(seed: 2048)
        func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        for count in 0...130 {
            // Blend: rows of 128 × a pixel, weights summing to 2048.
            let top = (0..<count).map { _ in Int16.random(in: 0...32640, using: &generator) }
            let bottom = (0..<count).map { _ in Int16.random(in: 0...32640, using: &generator) }
            let b = Int16.random(in: 0...2048, using: &generator)
            var blended = ([UInt8](repeating: 0, count: count + 1), [UInt8](repeating: 0, count: count + 1))
            FramePixelKernels.ResizeRows.blend(top, 2048 - b, bottom, b, into: &blended.0, count: count)
            FramePixelKernelsAVX2.ResizeRows.blend(top, 2048 - b, bottom, b, into: &blended.1, count: count)
            let want = (0..<count).map { (i: Int) -> UInt8 in
                let t: Int32 = (Int32(top[i]) * Int32(2048 - b)) >> 16
                let u: Int32 = (Int32(bottom[i]) * Int32(b)) >> 16
                return UInt8(clamping: (t + u + 2) >> 2)
            }
            #expect(Array(blended.0.prefix(count)) == want && blended.0 == blended.1 && blended.1[count] == 0, "blend \(count)")

            let r0 = bytes(2 * count)
            let r1 = bytes(2 * count)
            var halves = ([UInt8](repeating: 0, count: count + 1), [UInt8](repeating: 0, count: count + 1))
            FramePixelKernels.ResizeRows.halve(r0, r1, into: &halves.0, count: count)
            FramePixelKernelsAVX2.ResizeRows.halve(r0, r1, into: &halves.1, count: count)
            let means = (0..<count).map { (i: Int) -> UInt8 in
                let top = Int(r0[2 * i]) + Int(r0[2 * i + 1])
                let bottom = Int(r1[2 * i]) + Int(r1[2 * i + 1])
                return UInt8((top + bottom + 2) >> 2)
            }
            #expect(Array(halves.0.prefix(count)) == means && halves.0 == halves.1 && halves.1[count] == 0, "2x2 mean \(count)")

            for channels in [3, 4] {
                let p0 = bytes(2 * channels * count)
                let p1 = bytes(2 * channels * count)
                var sums = [UInt16](repeating: 0, count: 2 * channels * count + 4)
                var pixels = ([UInt8](repeating: 0, count: channels * count + 1), [UInt8](repeating: 0, count: channels * count + 1))
                FramePixelKernels.ResizeRows.halvePixels(p0, p1, into: &pixels.0, count: count, channels: channels, sums: &sums)
                FramePixelKernelsAVX2.ResizeRows.halvePixels(p0, p1, into: &pixels.1, count: count, channels: channels, sums: &sums)
                let pixelMeans = (0..<(channels * count)).map { (i: Int) -> UInt8 in
                    let at = 2 * (i - i % channels) + i % channels
                    return UInt8((Int(p0[at]) + Int(p0[at + channels]) + Int(p1[at]) + Int(p1[at + channels]) + 2) >> 2)
                }
                #expect(
                    Array(pixels.0.prefix(channels * count)) == pixelMeans && pixels.0 == pixels.1 && pixels.1[channels * count] == 0,
                    "2x2 mean of \(channels)-byte pixels \(count)")
            }

            let sums = (0..<count).map { _ in Int32.random(in: 0...(255 * 4096), using: &generator) }
            var acc = ([UInt32](repeating: 7, count: count), [UInt32](repeating: 7, count: count))
            FramePixelKernels.ResizeRows.accumulate(sums, weight: 4000, into: &acc.0, count: count, start: true)
            FramePixelKernelsAVX2.ResizeRows.accumulate(sums, weight: 4000, into: &acc.1, count: count, start: true)
            FramePixelKernels.ResizeRows.accumulate(sums, weight: 96, into: &acc.0, count: count, start: false)
            FramePixelKernelsAVX2.ResizeRows.accumulate(sums, weight: 96, into: &acc.1, count: count, start: false)
            var finished = ([UInt8](repeating: 0, count: count), [UInt8](repeating: 0, count: count))
            FramePixelKernels.ResizeRows.finish(acc.0, into: &finished.0, count: count)
            FramePixelKernelsAVX2.ResizeRows.finish(acc.1, into: &finished.1, count: count)
            #expect(
                finished.0 == sums.map { UInt8((UInt32($0) * 4096 + (1 << 23)) >> 24) } && finished.0 == finished.1, "area rows \(count)")

            // The fused pass over 1…4 rows: the accumulator's bytes (weights summing to 4096, as an area resize's do).
            let rows = (0..<4).map { _ in (0..<count).map { _ in Int32.random(in: 0...(255 * 4096), using: &generator) } }
            for taps in 1...4 {
                var weights = (0..<taps - 1).map { _ in UInt32.random(in: 1...(4096 / UInt32(taps)), using: &generator) }
                weights.append(4096 - weights.reduce(0, +))
                var viaAccumulator = [UInt8](repeating: 0, count: count)
                var fused = ([UInt8](repeating: 0xA5, count: count + 1), [UInt8](repeating: 0xA5, count: count + 1))
                var acc = [UInt32](repeating: 0, count: count)
                for k in 0..<taps {
                    FramePixelKernels.ResizeRows.accumulate(rows[k], weight: weights[k], into: &acc, count: count, start: k == 0)
                }
                FramePixelKernels.ResizeRows.finish(acc, into: &viaAccumulator, count: count)
                rows[0].withUnsafeBufferPointer { r0 in
                    rows[1].withUnsafeBufferPointer { r1 in
                        rows[2].withUnsafeBufferPointer { r2 in
                            rows[3].withUnsafeBufferPointer { r3 in
                                let pointers = [r0, r1, r2, r3].map { $0.baseAddress ?? UnsafePointer(bitPattern: 4)! }
                                FramePixelKernels.ResizeRows.weightedRows(pointers, weights, taps: taps, into: &fused.0, count: count)
                                FramePixelKernelsAVX2.ResizeRows.weightedRows(
                                    pointers, weights, taps: taps, into: &fused.1, count: count)
                            }
                        }
                    }
                }
                #expect(
                    Array(fused.0.prefix(count)) == viaAccumulator && fused.0 == fused.1 && fused.1[count] == 0xA5, "\(taps) rows, \(count)"
                )
            }

            for size in 1...4 {
                let row = bytes(count * size)
                var mirrored = ([UInt8](repeating: 0, count: count * size + 1), [UInt8](repeating: 0, count: count * size + 1))
                row.withUnsafeBytes { s in
                    mirrored.0.withUnsafeMutableBytes {
                        FramePixelKernels.MirrorRows.reverse(s.baseAddress!, $0.baseAddress!, count: count, bytesPerPixel: size)
                    }
                    mirrored.1.withUnsafeMutableBytes {
                        FramePixelKernelsAVX2.MirrorRows.reverse(s.baseAddress!, $0.baseAddress!, count: count, bytesPerPixel: size)
                    }
                }
                let reversed = (0..<count).reversed().flatMap { row[($0 * size)..<($0 * size + size)] }
                #expect(Array(mirrored.0.prefix(count * size)) == reversed && mirrored.0 == mirrored.1, "mirror \(size) bytes × \(count)")
            }
        }
    }

    @Test(
        "area resize by exactly 3/8: the AVX2 rows, the portable rows and the general resize give the same bytes at widths 3…150, nothing written past a row",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func threeEighthRowsAgree() throws {
        var generator = SeededGenerator(seed: 38)
        for count in stride(from: 3, through: 150, by: 3) {
            let (sw, sh, dh) = (count / 3 * 8, 16, 6)
            var image = try PixelBuffer(width: sw, height: sh, format: .gray8)
            image.withUnsafeMutableBytes(ofPlane: 0) { b, _ in
                for i in b.indices { b[i] = Bool.random(using: &generator) ? 255 : UInt8.random(in: 0...255, using: &generator) }
            }
            var general = try PixelBuffer(width: count, height: dh, format: .gray8)
            var chosen = general.copy()
            try Resize.area(image, into: &general, plane: 0, order: .verticalFirst)
            try Resize.area(image, into: &chosen)
            #expect(chosen.packedBytes() == general.packedBytes(), "Resize.area at width \(count)")
            // The two builds' rows directly, into rows with a guard byte after each.
            let source = image.packedBytes()
            for wide in [false, true] {
                var out = [UInt8](repeating: 0xA5, count: dh * (count + 1))
                for k in 0..<(dh / 3) {
                    let rows = Array(source[(8 * k * sw)...])
                    out.withUnsafeMutableBufferPointer { o in
                        let at = o.baseAddress! + 3 * k * (count + 1)
                        if wide {
                            FramePixelKernelsAVX2.ThreeEighthRows.resize(rows, rowStride: sw, into: at, outStride: count + 1, count: count)
                        } else {
                            FramePixelKernels.ThreeEighthRows.resize(rows, rowStride: sw, into: at, outStride: count + 1, count: count)
                        }
                    }
                }
                let rows = (0..<dh).map { Array(out[($0 * (count + 1))..<($0 * (count + 1) + count)]) }
                #expect(rows.flatMap { $0 } == general.packedBytes(), "\(wide ? "AVX2" : "portable") rows at width \(count)")
                #expect((0..<dh).allSatisfy { out[$0 * (count + 1) + count] == 0xA5 }, "a row written past its end at width \(count)")
            }
        }
    }

    @Test(
        "fractional area resize: either pass first gives the same bytes (the sums are exact), within 1 of cv::resize, at sizes with and without shuffled rows and with ~300 taps an output"
    )
    func areaOrderIsExact() throws {
        var generator = SeededGenerator(seed: 375)
        // 3840 → 13: ~295 taps an output, whose rounding once wrapped a weight below zero.
        let sizes = [(1280, 720, 480, 270), (101, 37, 40, 13), (640, 480, 600, 300), (96, 96, 20, 30), (33, 7, 32, 1), (3840, 30, 13, 7)]
        for (sw, sh, dw, dh) in sizes {
            var image = try PixelBuffer(width: sw, height: sh, format: .gray8)
            image.withUnsafeMutableBytes(ofPlane: 0) { b, _ in
                for i in b.indices { b[i] = UInt8.random(in: 0...255, using: &generator) }
            }
            var vertical = try PixelBuffer(width: dw, height: dh, format: .gray8)
            var horizontal = try PixelBuffer(width: dw, height: dh, format: .gray8)
            try Resize.area(image, into: &vertical, plane: 0, order: .verticalFirst)
            try Resize.area(image, into: &horizontal, plane: 0, order: .horizontalFirst)
            #expect(vertical.packedBytes() == horizontal.packedBytes(), "\(sw)x\(sh) → \(dw)x\(dh)")
            // And both within 1 of OpenCV's INTER_AREA.
            var theirs = try PixelBuffer(width: dw, height: dh, format: .gray8)
            try OpenCV.resize(image, &theirs, area: true)
            let worst = zip(vertical.packedBytes(), theirs.packedBytes()).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(worst <= 1, "\(sw)x\(sh) → \(dw)x\(dh): off by \(worst) from cv::resize")
        }
    }

    @Test(
        "filter rows (blur passes, Sobel, threshold): both builds byte for byte at widths 1…130",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func filterRowsAgree() {
        var generator = SeededGenerator(seed: 5)
        let blurs: [(FramePixelKernels.FilterRows.Blur, FramePixelKernelsAVX2.FilterRows.Blur)] = [
            (.box3, .box3), (.box5, .box5), (.gaussian3, .gaussian3), (.gaussian5, .gaussian5)
        ]
        for w in 1...130 {
            let rows = (0..<5).map { _ in (0..<w).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            // Rows of sums and passes in one allocation each (the kernels take pointers).
            let sums = UnsafeMutablePointer<UInt16>.allocate(capacity: 10 * w)
            let passes = UnsafeMutablePointer<Int16>.allocate(capacity: 12 * w)
            defer {
                sums.deallocate()
                passes.deallocate()
            }
            func row(_ k: Int) -> UnsafePointer<UInt16> { UnsafePointer(sums + k * w) }
            for (base, wide) in blurs {
                for k in 0..<5 {
                    FramePixelKernels.FilterRows.horizontal(base, rows[k], into: sums + k * w, width: w)
                    FramePixelKernelsAVX2.FilterRows.horizontal(wide, rows[k], into: sums + (5 + k) * w, width: w)
                }
                #expect(
                    Array(UnsafeBufferPointer(start: sums, count: 5 * w)) == Array(UnsafeBufferPointer(start: sums + 5 * w, count: 5 * w)),
                    "\(base) horizontal, width \(w)")
                var out = ([UInt8](repeating: 0, count: w + 1), [UInt8](repeating: 0, count: w + 1))
                FramePixelKernels.FilterRows.vertical(base, (row(0), row(1), row(2), row(3), row(4)), into: &out.0, width: w)
                FramePixelKernelsAVX2.FilterRows.vertical(wide, (row(0), row(1), row(2), row(3), row(4)), into: &out.1, width: w)
                #expect(out.0 == out.1 && out.0[w] == 0, "\(base) vertical, width \(w)")
            }
            for k in 0..<3 {
                FramePixelKernels.FilterRows.sobelHorizontal(
                    rows[k], difference: passes + 2 * k * w, smooth: passes + (2 * k + 1) * w, width: w)
                FramePixelKernelsAVX2.FilterRows.sobelHorizontal(
                    rows[k], difference: passes + (6 + 2 * k) * w, smooth: passes + (7 + 2 * k) * w, width: w)
            }
            #expect(
                Array(UnsafeBufferPointer(start: passes, count: 6 * w)) == Array(UnsafeBufferPointer(start: passes + 6 * w, count: 6 * w)),
                "Sobel passes, width \(w)")
            func pass(_ k: Int) -> UnsafePointer<Int16> { UnsafePointer(passes + k * w) }
            var magnitude = ([UInt8](repeating: 0, count: w), [UInt8](repeating: 0, count: w))
            FramePixelKernels.FilterRows.sobelMagnitude(
                up: (pass(0), pass(1)), middle: pass(2), down: (pass(4), pass(5)), into: &magnitude.0, width: w)
            FramePixelKernelsAVX2.FilterRows.sobelMagnitude(
                up: (pass(0), pass(1)), middle: pass(2), down: (pass(4), pass(5)), into: &magnitude.1, width: w)
            #expect(magnitude.0 == magnitude.1, "Sobel magnitude, width \(w)")
            for (t, m) in [(UInt8(0), UInt8(255)), (127, 200), (254, 1)] {
                var above = ([UInt8](repeating: 7, count: w), [UInt8](repeating: 7, count: w))
                FramePixelKernels.FilterRows.threshold(rows[0], &above.0, count: w, threshold: t, maxValue: m)
                FramePixelKernelsAVX2.FilterRows.threshold(rows[0], &above.1, count: w, threshold: t, maxValue: m)
                #expect(above.0 == rows[0].map { $0 > t ? m : 0 } && above.0 == above.1, "threshold \(t)/\(m), width \(w)")
            }
        }
    }

    @Test(
        "quarter turns' register blocks (16x16 and 8x8): both builds byte for byte, and the source's pixels where they belong",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func quarterTurnBlocksAgree() {
        var generator = SeededGenerator(seed: 90)
        for (w, h) in [(16, 16), (32, 32), (40, 24), (57, 33), (8, 70), (70, 9), (96, 64), (7, 7)] {
            let source = (0..<(w * h)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            for clockwise in [true, false] {
                var outs = ([UInt8](repeating: 0, count: w * h), [UInt8](repeating: 0, count: w * h))
                var reach = [(y: Int, x: Int)]()
                // Tiles of 32x32, several per image (Transform's are 32 rows by 256 columns; the
                // kernel takes any tile).
                for ty in stride(from: 0, to: h, by: 32) {
                    for tx in stride(from: 0, to: w, by: 32) {
                        let (xe, ye) = (min(tx + 32, w), min(ty + 32, h))
                        reach.append(
                            FramePixelKernels.QuarterTurn.blocks(
                                source, w, &outs.0, h, x: tx, y: ty, xEnd: xe, yEnd: ye, width: w, height: h, clockwise: clockwise))
                        let wide = FramePixelKernelsAVX2.QuarterTurn.blocks(
                            source, w, &outs.1, h, x: tx, y: ty, xEnd: xe, yEnd: ye, width: w, height: h, clockwise: clockwise)
                        #expect(wide == reach.last!, "\(w)x\(h) tile \(tx),\(ty)")
                    }
                }
                #expect(outs.0 == outs.1, "\(w)x\(h) clockwise \(clockwise)")
                // Every pixel the blocks covered is where the turn puts it (the rest is the caller's).
                var tile = 0
                for ty in stride(from: 0, to: h, by: 32) {
                    for tx in stride(from: 0, to: w, by: 32) {
                        let (ry, rx) = reach[tile]
                        tile += 1
                        for sy in ty..<ry {
                            for sx in tx..<rx {
                                let (dx, dy) = clockwise ? (h - 1 - sy, sx) : (sy, w - 1 - sx)
                                if outs.1[dy * h + dx] != source[sy * w + sx] {
                                    Issue.record("\(w)x\(h) clockwise \(clockwise): (\(sx), \(sy)) misplaced")
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
