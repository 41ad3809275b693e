import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("Y'CbCr → RGB at the extremes")
struct ConversionExtremesTests {
    @Test(
        "every matrix and range, at the edges of the code space, within 1 LSB of the formula and never out of range",
        arguments: [
            (PixelFormat.nv12VideoRange, ColorConversion.Matrix.bt601), (.nv12VideoRange, .bt709),
            (.nv12FullRange, .bt601), (.nv12FullRange, .bt709)
        ])
    func extremes(format: PixelFormat, matrix: ColorConversion.Matrix) throws {
        let levels: [UInt8] = [0, 1, 16, 64, 128, 200, 235, 240, 254, 255]
        var combos: [(UInt8, UInt8, UInt8)] = []
        for y in levels { for u in levels { for v in levels { combos.append((y, u, v)) } } }
        let width = combos.count * 2
        var bytes = [UInt8](repeating: 0, count: width * 2 + width)
        for (i, (y, u, v)) in combos.enumerated() {
            for row in 0..<2 {
                bytes[row * width + 2 * i] = y
                bytes[row * width + 2 * i + 1] = y
            }
            bytes[2 * width + 2 * i] = u
            bytes[2 * width + 2 * i + 1] = v
        }
        let image = try PixelBuffer(width: width, height: 2, format: format, packedBytes: bytes)
        var out = try PixelBuffer(width: width, height: 2, format: .rgb24)
        try ColorConversion.convert(image, into: &out, matrix: matrix)
        let rgb = out.packedBytes()
        let (kr, kb) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
        let kg = 1 - kr - kb
        let full = format == .nv12FullRange
        var worst = 0.0
        for (i, (y, u, v)) in combos.enumerated() {
            let yy = full ? Double(y) : max(0, Double(y) - 16) * 255 / 219
            let cs = full ? 1 : 255.0 / 224
            let cu = Double(u) - 128
            let cv = Double(v) - 128
            let expected = [
                yy + 2 * (1 - kr) * cs * cv,
                yy - 2 * (1 - kb) * kb / kg * cs * cu - 2 * (1 - kr) * kr / kg * cs * cv,
                yy + 2 * (1 - kb) * cs * cu
            ].map { min(255, max(0, $0)) }
            for c in 0..<3 { worst = max(worst, abs(Double(rgb[6 * i + c]) - expected[c])) }
        }
        #expect(worst <= 1.0, "worst difference \(worst)")
    }
}
