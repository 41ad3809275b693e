import Foundation
import FrameKit
import FramePixelKernels
import FramePixelKernelsAVX2
import FramePixels
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("Run-time kernel dispatch: the AVX2 build gives the baseline's bytes (colour conversion)")
struct KernelDispatchTests {
    @Test("the path: AVX2 where it can run, the baseline when forced or when it cannot")
    func choice() {
        #if arch(x86_64)
        #expect(KernelDispatch.choose(environment: nil, avx2Usable: true) == .avx2)
        #expect(KernelDispatch.choose(environment: "baseline", avx2Usable: true) == .baseline)
        #expect(KernelDispatch.choose(environment: "avx2", avx2Usable: false) == .baseline)
        #endif
        #expect(KernelDispatch.choose(environment: nil, avx2Usable: false) == .baseline)
        // This process: what the machine and FRAMEKIT_SIMD say (CI runs the suites both ways).
        let forced = ProcessInfo.processInfo.environment["FRAMEKIT_SIMD"] == "baseline"
        #expect(KernelDispatch.path == (forced || !KernelDispatch.isAVX2Usable ? .baseline : .avx2))
    }

    @Test(
        "RGB24 and BGRA to gray: both builds byte for byte at every width 0…300 (the 32-, 16- and 1-pixel steps and their seams)",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func grayRowsAgree() {
        var generator = SeededGenerator(seed: 19)
        for bgra in [false, true] {
            let channels = bgra ? 4 : 3
            for width in 0...300 {
                // A row with slack after it: the RGB24 kernels read 2 bytes past their last pixel.
                let source = (0..<(width * channels + 8)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                var base = [UInt8](repeating: 0, count: width + 1)
                var wide = [UInt8](repeating: 0, count: width + 1)
                source.withUnsafeBufferPointer { s in
                    base.withUnsafeMutableBufferPointer {
                        FramePixelKernels.GrayRows.convertRow(s.baseAddress!, $0.baseAddress!, width: width, bgra: bgra)
                    }
                    wide.withUnsafeMutableBufferPointer {
                        FramePixelKernelsAVX2.GrayRows.convertRow(s.baseAddress!, $0.baseAddress!, width: width, bgra: bgra)
                    }
                }
                #expect(base == wide, "\(bgra ? "BGRA" : "RGB24") width \(width)")
                // And the formula itself, pixel by pixel.
                for x in 0..<width {
                    let p = x * channels
                    let (r, g, b) = bgra ? (source[p + 2], source[p + 1], source[p]) : (source[p], source[p + 1], source[p + 2])
                    let sum: Int = 9798 * Int(r) + 19235 * Int(g) + 3735 * Int(b) + 16384
                    let want = UInt8(sum >> 15)
                    if base[x] != want {
                        Issue.record("width \(width) pixel \(x): \(base[x]) != \(want)")
                        break
                    }
                }
                #expect(base[width] == 0 && wide[width] == 0, "a kernel wrote past the row")
            }
        }
    }

    @Test(
        "YUYV to gray: both builds give the even bytes at every width 0…300",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func yuyvLumaAgrees() {
        var generator = SeededGenerator(seed: 23)
        for width in 0...300 {
            let source = (0..<(2 * width)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // One byte past the row, 0xA5: a kernel writing past the row changes it.
            let want = (0..<width).map { source[2 * $0] } + [0xA5]
            var base = [UInt8](repeating: 0xA5, count: width + 1)
            var wide = [UInt8](repeating: 0xA5, count: width + 1)
            source.withUnsafeBufferPointer { s in
                let s = s.baseAddress ?? UnsafePointer(bitPattern: 1)!
                base.withUnsafeMutableBufferPointer { FramePixelKernels.GrayRows.lumaOfYUYV(s, $0.baseAddress!, width: width) }
                wide.withUnsafeMutableBufferPointer { FramePixelKernelsAVX2.GrayRows.lumaOfYUYV(s, $0.baseAddress!, width: width) }
            }
            #expect(base == want, "baseline, width \(width)")
            #expect(wide == want, "AVX2, width \(width)")
        }
    }

    @Test(
        "Y'CbCr to BGRA and RGB24 (NV12, I420, YUYV rows; one and two rows; every matrix and range): both builds byte for byte at widths 0…160",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func yCbCrRowsAgree() {
        var generator = SeededGenerator(seed: 1919)
        let gains: [(Int32, Int32, Int32, Int32, Int32, Bool)] = [
            (1_220_542, 1_673_527, -409_993, -852_492, 2_116_026, false), (1 << 20, 1_470_103, -360_857, -748_833, 1_858_076, true)
        ]
        for (y, rv, gu, gv, bu, full) in gains {
            let base = FramePixelKernels.YCbCrRows(y: y, rv: rv, gu: gu, gv: gv, bu: bu, fullRange: full)
            let wide = FramePixelKernelsAVX2.YCbCrRows(y: y, rv: rv, gu: gu, gv: gv, bu: bu, fullRange: full)
            for layout in 0..<3 {
                for bgra in [false, true] {
                    for width in stride(from: 0, through: 160, by: 2) {
                        let channels = bgra ? 4 : 3
                        let lumaBytes = layout == 2 ? 2 * width : width
                        let luma = (0..<(lumaBytes + 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        let luma2 = (0..<(lumaBytes + 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        let cb = (0..<(width + 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        let cr = (0..<(width + 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        // Rows of the output with one guard byte each: base, its second row, wide, its second row.
                        let count = width * channels + 1
                        let outs = (0..<4).map { _ in UnsafeMutablePointer<UInt8>.allocate(capacity: count) }
                        defer { for o in outs { o.deallocate() } }
                        for o in outs { o.initialize(repeating: 0, count: count) }
                        let (l, l2, u, v) = (
                            UnsafeMutablePointer<UInt8>.allocate(capacity: luma.count),
                            UnsafeMutablePointer<UInt8>.allocate(capacity: luma2.count),
                            UnsafeMutablePointer<UInt8>.allocate(capacity: cb.count),
                            UnsafeMutablePointer<UInt8>.allocate(capacity: cr.count)
                        )
                        defer { for p in [l, l2, u, v] { p.deallocate() } }
                        l.initialize(from: luma, count: luma.count)
                        l2.initialize(from: luma2, count: luma2.count)
                        u.initialize(from: cb, count: cb.count)
                        v.initialize(from: cr, count: cr.count)
                        let chroma: (FramePixelKernels.YCbCrRows.Chroma, FramePixelKernelsAVX2.YCbCrRows.Chroma) =
                            switch layout {
                            case 0: (.interleaved(u), .interleaved(u))
                            case 1: (.planar(u, v), .planar(u, v))
                            default: (.packedYUYV, .packedYUYV)
                            }
                        let pair = layout != 2
                        base.convertRows(
                            luma: l, into: outs[0], second: pair ? (UnsafePointer(l2), outs[1]) : nil, chroma: chroma.0, width: width,
                            bgra: bgra)
                        wide.convertRows(
                            luma: l, into: outs[2], second: pair ? (UnsafePointer(l2), outs[3]) : nil, chroma: chroma.1, width: width,
                            bgra: bgra)
                        func bytes(_ i: Int) -> [UInt8] { Array(UnsafeBufferPointer(start: outs[i], count: count)) }
                        let outsBytes = (0..<4).map(bytes)
                        let name = ["NV12", "I420", "YUYV"][layout] + (bgra ? "→BGRA" : "→RGB24") + " full \(full) width \(width)"
                        #expect(outsBytes[0] == outsBytes[2] && outsBytes[1] == outsBytes[3], "\(name)")
                        #expect(outsBytes[0].last == 0 && outsBytes[2].last == 0, "\(name): a kernel wrote past the row")
                    }
                }
            }
        }
    }

    /// Y'CbCr of RGB by the definition, in floating point: luma per pixel, chroma from the mean.
    static func exactYCbCr(r: Double, g: Double, b: Double, kr: Double, kb: Double, full: Bool) -> (y: Double, cb: Double, cr: Double) {
        let kg = 1 - kr - kb
        let (ys, cs, offset) = full ? (1.0, 1.0, 0.0) : (219.0 / 255, 224.0 / 255, 16.0)
        let y = kr * r + kg * g + kb * b
        return (offset + ys * y, 128 + cs * (b - y) / (2 * (1 - kb)), 128 + cs * (r - y) / (2 * (1 - kr)))
    }

    @Test(
        "Y'CbCr luma weights: in 256ths where every colour stays within 1 of the definition (BT.601 both ranges, BT.709 video), else in 32768ths; checked at the colour cube's corners and on a grid"
    )
    func lumaWeightsKeepTheirBound() {
        for (kr, kb) in [(0.299, 0.114), (0.2126, 0.0722)] {
            for full in [false, true] {
                let (ys, kg) = (full ? 1.0 : 219.0 / 255, 1 - kr - kb)
                let w = FramePixelKernels.RGBToYCbCrRows.lumaWeights(kr * ys, kg * ys, kb * ys, offset: full ? 0 : 16)
                let inBytes = [w.red, w.green, w.blue, w.bias].allSatisfy { $0 % 128 == 0 }
                #expect(inBytes == !(kr == 0.2126 && full), "BT.\(kr == 0.299 ? 601 : 709) \(full ? "full" : "video"): bytes \(inBytes)")
                var worst = 0.0
                let grid = Array(stride(from: 0, through: 255, by: 5))
                for r in grid {
                    for g in grid {
                        for b in grid {
                            let y = (Int32(r) * w.red + Int32(g) * w.green + Int32(b) * w.blue + w.bias) >> 15
                            let want = Self.exactYCbCr(r: Double(r), g: Double(g), b: Double(b), kr: kr, kb: kb, full: full).y
                            worst = max(worst, abs(Double(y) - want))
                        }
                    }
                }
                #expect(worst <= 1, "BT.\(kr == 0.299 ? 601 : 709) \(full ? "full" : "video"): off by \(worst)")
                if inBytes {
                    #expect(FramePixelKernels.RGBToYCbCrRows.byteWeightError(kr * ys, kg * ys, kb * ys) < 0.5)
                }
            }
        }
    }

    @Test(
        "RGB24 and BGRA to NV12 and I420 rows (both matrices and ranges): both builds byte for byte at widths 0…100, within 1 of the definition",
        .enabled(if: KernelDispatch.isAVX2Usable, "this CPU or OS cannot run AVX2"))
    func rgbToYCbCrRowsAgree() {
        var generator = SeededGenerator(seed: 420)
        for (kr, kb) in [(0.299, 0.114), (0.2126, 0.0722)] {
            for full in [false, true] {
                let base = FramePixelKernels.RGBToYCbCrRows(kr: kr, kb: kb, fullRange: full)
                let wide = FramePixelKernelsAVX2.RGBToYCbCrRows(kr: kr, kb: kb, fullRange: full)
                for bgra in [false, true] {
                    let channels = bgra ? 4 : 3
                    for width in 0...100 {
                        let pairs = (width + 1) / 2
                        let top = (0..<(width * channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        let bottom = (0..<(width * channels)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        for planar in [false, true] {
                            // Per build: two luma rows, then the chroma (Cb/Cr pairs, or Cb then Cr), a guard byte after each.
                            func run(
                                _ convert: (
                                    UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt8>,
                                    UnsafeMutablePointer<UInt8>
                                ) -> Void
                            ) -> [[UInt8]] {
                                let sizes = [width + 1, width + 1, (planar ? pairs : 2 * pairs) + 1, pairs + 1]
                                let buffers = sizes.map { UnsafeMutablePointer<UInt8>.allocate(capacity: $0) }
                                defer { for b in buffers { b.deallocate() } }
                                for (b, n) in zip(buffers, sizes) { b.initialize(repeating: 0, count: n) }
                                convert(buffers[0], buffers[1], buffers[2], buffers[3])
                                return zip(buffers, sizes).map { Array(UnsafeBufferPointer(start: $0, count: $1)) }
                            }
                            let ours = run { y0, y1, c, d in
                                base.convertRows(
                                    top, bottom, lumaTop: y0, lumaBottom: y1, chroma: planar ? .planar(c, d) : .interleaved(c),
                                    width: width, bgra: bgra)
                            }
                            let theirs = run { y0, y1, c, d in
                                wide.convertRows(
                                    top, bottom, lumaTop: y0, lumaBottom: y1, chroma: planar ? .planar(c, d) : .interleaved(c),
                                    width: width, bgra: bgra)
                            }
                            let name = "\(kr) full \(full) \(bgra ? "BGRA" : "RGB24") \(planar ? "I420" : "NV12") width \(width)"
                            #expect(ours == theirs, "\(name)")
                            #expect(ours.allSatisfy { $0.last == 0 }, "\(name): wrote past a row")
                            // Against the definition.
                            func rgb(_ row: [UInt8], _ x: Int) -> (Double, Double, Double) {
                                let p = x * channels
                                return bgra
                                    ? (Double(row[p + 2]), Double(row[p + 1]), Double(row[p]))
                                    : (Double(row[p]), Double(row[p + 1]), Double(row[p + 2]))
                            }
                            var worst = 0.0
                            for x in 0..<width {
                                for (row, out) in [(top, ours[0]), (bottom, ours[1])] {
                                    let (r, g, b) = rgb(row, x)
                                    worst = max(
                                        worst, abs(Double(out[x]) - Self.exactYCbCr(r: r, g: g, b: b, kr: kr, kb: kb, full: full).y))
                                }
                            }
                            for j in 0..<pairs {
                                let xs = [2 * j, min(2 * j + 1, width - 1)]
                                var (r, g, b) = (0.0, 0.0, 0.0)
                                for row in [top, bottom] {
                                    for x in xs {
                                        let p = rgb(row, x)
                                        (r, g, b) = (r + p.0 / 4, g + p.1 / 4, b + p.2 / 4)
                                    }
                                }
                                let want = Self.exactYCbCr(r: r, g: g, b: b, kr: kr, kb: kb, full: full)
                                let (u, v) = planar ? (ours[2][j], ours[3][j]) : (ours[2][2 * j], ours[2][2 * j + 1])
                                worst = max(worst, abs(Double(u) - min(255, want.cb)), abs(Double(v) - min(255, want.cr)))
                            }
                            #expect(worst <= 1, "\(name): off by \(worst) from the definition")
                        }
                    }
                }
            }
        }
    }
}
