import Foundation
import FrameKit
import FramePixelKernels
import FramePixelKernelsAVX2
import FramePixels
import FrameTestSupport
import Testing

@Suite("Run-time kernel dispatch: the AVX2 build gives the baseline's bytes")
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
}
