import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

@Suite("Filters against OpenCV on the reference photos")
struct FilterAccuracyTests {
    static let grayCases: [(PixelFormat, OpenCV.ColorCode)] = [
        (.bgra32, .bgraToGray), (.rgb24, .rgbToGray), (.nv12VideoRange, .yuv420ToGray), (.i420, .yuv420ToGray), (.yuyv, .yuyvToGray)
    ]

    @Test("to gray is pixel-exact against cv::cvtColor", arguments: 0..<5)
    func toGray(index: Int) throws {
        let (format, code) = Self.grayCases[index]
        for photo in ReferenceImages.photos {
            let whole = try ReferenceImages.load(photo, as: format)
            // Also a view whose rows are padded and 301 pixels long: each row then ends in the scalar code.
            for image in [whole, try whole.cropped(to: Rect(x: 2, y: 2, width: format.isYCbCr ? 302 : 301, height: 200))] {
                var ours = try PixelBuffer(width: image.width, height: image.height, format: .gray8)
                var theirs = ours.copy()
                try ColorConversion.convertToGray(image, into: &ours)
                try OpenCV.cvtColor(image, &theirs, code)
                #expect(
                    ReferenceImages.difference(ours, theirs).max == 0, "\(format) \(photo.lastPathComponent) \(image.width)x\(image.height)"
                )
            }
        }
    }

    @Test(
        "RGB24/BGRA → I420, NV12 and YUYV: luma within 1 of cv::cvtColor(…2YUV_I420); chroma, each block's mean, equal on flat blocks; padded views",
        arguments: [PixelFormat.rgb24, .bgra32])
    func toYCbCr(format: PixelFormat) throws {
        for photo in ReferenceImages.photos {
            let image = try ReferenceImages.load(photo, as: format)
            var ours = try PixelBuffer(width: image.width, height: image.height, format: .i420)
            var theirs = ours.copy()
            try ColorConversion.convertToYCbCr(image, into: &ours)
            try OpenCV.cvtColor(image, &theirs, format == .rgb24 ? .rgbToI420 : .bgraToI420)
            let lumaBytes = image.width * image.height
            let (a, b) = (ours.packedBytes(), theirs.packedBytes())
            let luma = zip(a.prefix(lumaBytes), b.prefix(lumaBytes)).map { abs(Int($0) - Int($1)) }
            #expect(luma.max() ?? 0 <= 1, "\(photo.lastPathComponent): luma off by \(luma.max() ?? 0)")
            // OpenCV's chroma is the block's top-left pixel's; where all four pixels are alike,
            // the mean is that pixel, so the two must agree within 1 there.
            let rgb = try PixelFormatConversion.convert(image, to: .rgb24).packedBytes()
            let (w, cw) = (image.width, image.width / 2)
            var flat = 0
            for cy in 0..<(image.height / 2) {
                for cx in 0..<cw {
                    let corners = [(2 * cx, 2 * cy), (2 * cx + 1, 2 * cy), (2 * cx, 2 * cy + 1), (2 * cx + 1, 2 * cy + 1)]
                    let pixels = corners.map { Array(rgb[(($0.1 * w + $0.0) * 3)..<(($0.1 * w + $0.0) * 3 + 3)]) }
                    guard pixels.allSatisfy({ $0 == pixels[0] }) else { continue }
                    flat += 1
                    for plane in 0..<2 {
                        let i = lumaBytes + plane * cw * (image.height / 2) + cy * cw + cx
                        if abs(Int(a[i]) - Int(b[i])) > 1 {
                            Issue.record("\(photo.lastPathComponent) block \(cx),\(cy) plane \(plane + 1)")
                        }
                    }
                }
            }
            #expect(flat > 100, "too few flat blocks to compare chroma (\(flat))")
            // NV12 is the same planes interleaved.
            var nv12 = try PixelBuffer(width: image.width, height: image.height, format: .nv12VideoRange)
            try ColorConversion.convertToYCbCr(image, into: &nv12)
            let n = nv12.packedBytes()
            #expect(Array(n.prefix(lumaBytes)) == Array(a.prefix(lumaBytes)))
            let cbs = stride(from: lumaBytes, to: n.count, by: 2).map { n[$0] }
            let crs = stride(from: lumaBytes + 1, to: n.count, by: 2).map { n[$0] }
            #expect(cbs + crs == Array(a.suffix(from: lumaBytes)), "\(photo.lastPathComponent): NV12 and I420 chroma differ")
            // A view with padded rows converts as its packed copy does.
            let view = try image.cropped(to: Rect(x: 2, y: 2, width: 302, height: 200))
            var fromView = try PixelBuffer(width: 302, height: 200, format: .nv12VideoRange)
            var fromCopy = fromView.copy()
            try ColorConversion.convertToYCbCr(view, into: &fromView)
            try ColorConversion.convertToYCbCr(view.copy(), into: &fromCopy)
            #expect(fromView.packedBytes() == fromCopy.packedBytes(), "\(photo.lastPathComponent): a padded view")
            // YUYV: luma as I420's; each pair's chroma the mean of its two pixels, which on a flat
            // 2x2 block is the I420 block's.
            var yuyv = try PixelBuffer(width: image.width, height: image.height, format: .yuyv)
            try ColorConversion.convertToYCbCr(image, into: &yuyv)
            let packed = yuyv.packedBytes()
            #expect(
                stride(from: 0, to: packed.count, by: 2).map { packed[$0] } == Array(a.prefix(lumaBytes)),
                "\(photo.lastPathComponent): YUYV luma")
            var mismatch = 0
            for cy in 0..<(image.height / 2) {
                for cx in 0..<cw {
                    let px = [(2 * cx, 2 * cy), (2 * cx + 1, 2 * cy), (2 * cx, 2 * cy + 1), (2 * cx + 1, 2 * cy + 1)].map {
                        Array(rgb[(($0.1 * w + $0.0) * 3)..<(($0.1 * w + $0.0) * 3 + 3)])
                    }
                    guard px.allSatisfy({ $0 == px[0] }) else { continue }
                    let o = (2 * cy) * w * 2 + 4 * cx
                    let i = lumaBytes + cy * cw + cx
                    let j = lumaBytes + cw * (image.height / 2) + cy * cw + cx
                    if abs(Int(packed[o + 1]) - Int(a[i])) > 1 || abs(Int(packed[o + 3]) - Int(a[j])) > 1 { mismatch += 1 }
                }
            }
            #expect(mismatch == 0, "\(photo.lastPathComponent): YUYV chroma differs from I420's on \(mismatch) flat blocks")
        }
    }

    static let rgbCases: [(PixelFormat, PixelFormat, OpenCV.ColorCode)] = [
        (.nv12VideoRange, .rgb24, .nv12ToRGB), (.nv12VideoRange, .bgra32, .nv12ToBGRA), (.i420, .rgb24, .i420ToRGB),
        (.i420, .bgra32, .i420ToBGRA), (.yuyv, .rgb24, .yuyvToRGB), (.yuyv, .bgra32, .yuyvToBGRA)
    ]

    @Test("Y'CbCr → RGB/BGRA (BT.601 video range) within 1 LSB of cv::cvtColor, in under 1 byte in 50", arguments: 0..<6)
    func toRGB(index: Int) throws {
        let (source, target, code) = Self.rgbCases[index]
        for photo in ReferenceImages.photos {
            let image = try ReferenceImages.load(photo, as: source)
            var ours = try PixelBuffer(width: image.width, height: image.height, format: target)
            var theirs = ours.copy()
            try ColorConversion.convert(image, into: &ours, matrix: .bt601)
            try OpenCV.cvtColor(image, &theirs, code)
            let diff = ReferenceImages.difference(ours, theirs)
            let bytes = ours.packedBytes().count
            #expect(
                diff.max <= 1 && diff.count * 50 < bytes,
                "\(source)→\(target) \(photo.lastPathComponent): max \(diff.max), \(diff.count) of \(bytes) differ")
            print("\(source)→\(target) \(photo.lastPathComponent): \(diff.count) of \(bytes) bytes differ by 1")
        }
    }

    @Test(
        "Y'CbCr → RGB: the SSE2 blocks and the scalar row ends give the same bytes",
        arguments: [
            (PixelFormat.nv12VideoRange, PixelFormat.rgb24), (.nv12FullRange, .bgra32), (.i420, .rgb24), (.yuyv, .bgra32), (.yuyv, .rgb24)
        ])
    func vectorAndScalarAgree(source: PixelFormat, target: PixelFormat) throws {
        // The narrower view ends 18 pixels earlier, so pixels converted in vector blocks in
        // the whole image are converted by the scalar tail in the view, and the other way round.
        let image = try ReferenceImages.load(Fixtures.astronaut, as: source)
        let view = try image.cropped(to: Rect(x: 0, y: 0, width: image.width - 18, height: image.height))
        var whole = try PixelBuffer(width: image.width, height: image.height, format: target)
        var part = try PixelBuffer(width: view.width, height: view.height, format: target)
        try ColorConversion.convert(image, into: &whole, matrix: .bt709)
        try ColorConversion.convert(view, into: &part, matrix: .bt709)
        #expect(try whole.cropped(to: Rect(x: 0, y: 0, width: view.width, height: view.height)).packedBytes() == part.packedBytes())
    }

    @Test(
        "BT.709 and full range (no OpenCV counterpart) within 1 LSB of the floating-point formula",
        arguments: [(PixelFormat.nv12VideoRange, ColorConversion.Matrix.bt709), (.nv12FullRange, .bt601), (.nv12FullRange, .bt709)])
    func otherMatrices(format: PixelFormat, matrix: ColorConversion.Matrix) throws {
        let image = try ReferenceImages.load(Fixtures.astronaut, as: format)
        var ours = try PixelBuffer(width: 512, height: 512, format: .rgb24)
        try ColorConversion.convert(image, into: &ours, matrix: matrix)
        let (kr, kb) = matrix == .bt601 ? (0.299, 0.114) : (0.2126, 0.0722)
        let kg = 1 - kr - kb
        let full = format == .nv12FullRange
        let out = ours.packedBytes()
        var worst = 0.0
        for (x, y) in [(10, 10), (200, 120), (256, 300), (500, 500), (77, 411)] {
            let luma = image.withUnsafeBytes(ofPlane: 0) { b, p in Double(b[y * p.bytesPerRow + x]) }
            let (u, v) = image.withUnsafeBytes(ofPlane: 1) { b, p in
                (Double(b[(y / 2) * p.bytesPerRow + (x / 2) * 2]) - 128, Double(b[(y / 2) * p.bytesPerRow + (x / 2) * 2 + 1]) - 128)
            }
            let yy = full ? luma : (luma - 16) * 255 / 219
            let cs = full ? 1 : 255.0 / 224
            let r = yy + 2 * (1 - kr) * cs * v
            let g = yy - 2 * (1 - kb) * kb / kg * cs * u - 2 * (1 - kr) * kr / kg * cs * v
            let b = yy + 2 * (1 - kb) * cs * u
            for (c, expected) in [r, g, b].enumerated() {
                let e = min(255, max(0, expected))
                worst = max(worst, abs(Double(out[(y * 512 + x) * 3 + c]) - e))
            }
        }
        #expect(worst <= 1.0, "worst \(worst)")
    }

    @Test(
        "resize: area down-scaling and bilinear within 1 LSB of cv::resize",
        arguments: [
            (256, 256, true), (250, 166, true), (171, 100, true), (300, 200, false), (700, 500, false), (512, 288, false)
        ])
    func resize(width: Int, height: Int, area: Bool) throws {
        for photo in ReferenceImages.photos {
            let gray = try ReferenceImages.load(photo, as: .gray8)
            guard width <= gray.width || !area else { continue }
            var ours = try PixelBuffer(width: width, height: height, format: .gray8)
            var theirs = ours.copy()
            if area { try Resize.area(gray, into: &ours) } else { try Resize.bilinear(gray, into: &ours) }
            try OpenCV.resize(gray, &theirs, area: area)
            let diff = ReferenceImages.difference(ours, theirs)
            #expect(diff.max <= 1, "\(photo.lastPathComponent) → \(width)x\(height): max \(diff.max), \(diff.count) differ")
        }
    }

    @Test(
        "bilinear resize to exactly half size: each 2x2 block's rounded mean, channel by channel, as cv::resize gives it",
        arguments: [PixelFormat.gray8, .rgb24, .bgra32])
    func bilinearHalf(format: PixelFormat) throws {
        for photo in ReferenceImages.photos {
            // A padded view too (rows with a stride wider than the row, from an odd offset).
            let whole = try ReferenceImages.load(photo, as: format)
            for image in [whole, try whole.cropped(to: Rect(x: 1, y: 3, width: 302, height: 198))] {
                var ours = try PixelBuffer(width: image.width / 2, height: image.height / 2, format: format)
                var theirs = ours.copy()
                try Resize.bilinear(image, into: &ours)
                try OpenCV.resize(image, &theirs, area: false)
                #expect(ReferenceImages.difference(ours, theirs).max == 0, "\(photo.lastPathComponent) \(image.width)x\(image.height)")
                let source = image.packedBytes()
                let c = image.plane(0).bytesPerPixel
                let row = c * image.width
                let means = (0..<ours.height).flatMap { y in
                    (0..<(c * ours.width)).map { i in
                        let at = 2 * y * row + 2 * (i - i % c) + i % c
                        let sum = Int(source[at]) + Int(source[at + c]) + Int(source[at + row]) + Int(source[at + row + c])
                        return UInt8((sum + 2) / 4)
                    }
                }
                #expect(ours.packedBytes() == means, "\(photo.lastPathComponent) \(image.width)x\(image.height)")
            }
        }
    }

    @Test("bilinear resize by exactly 3/4 of gray images: the exact bilinear value rounded once, within 1 LSB of cv::resize")
    func threeQuarterBilinear() throws {
        for photo in ReferenceImages.photos {
            let whole = try ReferenceImages.load(photo, as: .gray8)
            // The whole photo cut to fours, and a view with a wider stride from an odd offset
            // whose width leaves a partial 48-output step.
            let fours = try whole.cropped(to: Rect(x: 0, y: 0, width: whole.width / 4 * 4, height: whole.height / 4 * 4))
            for image in [fours, try whole.cropped(to: Rect(x: 3, y: 1, width: 212, height: 96))] {
                var ours = try PixelBuffer(width: image.width * 3 / 4, height: image.height * 3 / 4, format: .gray8)
                var theirs = ours.copy()
                try Resize.bilinear(image, into: &ours)
                try OpenCV.resize(image, &theirs, area: false)
                let diff = ReferenceImages.difference(ours, theirs)
                #expect(diff.max <= 1, "\(photo.lastPathComponent) \(image.width)x\(image.height): max \(diff.max)")
                let source = image.packedBytes()
                let weights = [[5, 1], [3, 3], [1, 5]]
                let exact = (0..<ours.height).flatMap { y in
                    (0..<ours.width).map { x -> UInt8 in
                        var sum = 0
                        for (i, wy) in weights[y % 3].enumerated() {
                            for (j, wx) in weights[x % 3].enumerated() {
                                sum += wy * wx * Int(source[(4 * (y / 3) + y % 3 + i) * image.width + 4 * (x / 3) + x % 3 + j])
                            }
                        }
                        return UInt8((sum + 18) / 36)
                    }
                }
                #expect(ours.packedBytes() == exact, "\(photo.lastPathComponent) \(image.width)x\(image.height)")
            }
        }
    }

    @Test("bilinear resize of colour images within 1 LSB of cv::resize", arguments: [PixelFormat.rgb24, .bgra32])
    func colourBilinear(format: PixelFormat) throws {
        for photo in ReferenceImages.photos {
            let image = try ReferenceImages.load(photo, as: format)
            for (width, height) in [(1280, 720), (301, 199)] {
                var ours = try PixelBuffer(width: width, height: height, format: format)
                var theirs = ours.copy()
                try Resize.bilinear(image, into: &ours)
                try OpenCV.resize(image, &theirs, area: false)
                let diff = ReferenceImages.difference(ours, theirs)
                #expect(diff.max <= 1, "\(photo.lastPathComponent) → \(width)x\(height) \(format): max \(diff.max), \(diff.count) differ")
            }
        }
    }

    @Test("box and Gaussian blur, 3x3 and 5x5, within 1 LSB of OpenCV", arguments: [3, 5])
    func blurs(size: Int) throws {
        for photo in ReferenceImages.photos {
            try Self.expectBlursMatchOpenCV(ReferenceImages.load(photo, as: .gray8), size: size, photo.lastPathComponent)
        }
    }

    /// Box and Gaussian blur of `gray` with a `size` x `size` kernel, each within 1 LSB of OpenCV's.
    static func expectBlursMatchOpenCV(_ gray: PixelBuffer, size: Int, _ label: String) throws {
        let k = Filters.KernelSize(rawValue: size)!
        var ours = try PixelBuffer(width: gray.width, height: gray.height, format: .gray8)
        var theirs = ours.copy()
        try Filters.boxBlur(gray, into: &ours, size: k)
        try OpenCV.boxBlur(gray, &theirs, size: size)
        #expect(ReferenceImages.difference(ours, theirs).max <= 1, "box \(size), \(label)")
        try Filters.gaussianBlur(gray, into: &ours, size: k)
        try OpenCV.gaussianBlur(gray, &theirs, size: size)
        #expect(ReferenceImages.difference(ours, theirs).max <= 1, "gaussian \(size), \(label)")
    }

    @Test("Sobel magnitude, threshold and histogram equalisation are pixel-exact")
    func exactFilters() throws {
        for photo in ReferenceImages.photos {
            let gray = try ReferenceImages.load(photo, as: .gray8)
            var ours = try PixelBuffer(width: gray.width, height: gray.height, format: .gray8)
            var theirs = ours.copy()
            try Filters.sobelMagnitude(gray, into: &ours)
            try OpenCV.sobelMagnitude(gray, &theirs)
            #expect(ReferenceImages.difference(ours, theirs).max == 0, "sobel")
            for (t, high): (UInt8, UInt8) in [(100, 200), (0, 255), (127, 255), (128, 1), (254, 255), (255, 255)] {
                try Filters.threshold(gray, into: &ours, threshold: t, maxValue: high)
                try OpenCV.threshold(gray, &theirs, Double(t), max: Double(high))
                #expect(ReferenceImages.difference(ours, theirs).max == 0, "threshold \(t) → \(high)")
            }
            try Filters.equalizeHistogram(gray, into: &ours)
            try OpenCV.equalizeHistogram(gray, &theirs)
            #expect(ReferenceImages.difference(ours, theirs).max == 0, "equalize")
        }
    }

    @Test("rotation and mirroring are pixel-exact against cv::rotate and cv::flip", arguments: [PixelFormat.gray8, .rgb24, .bgra32])
    func rotation(format: PixelFormat) throws {
        // A view with odd sides and a row stride wider than the row: the vector blocks and the
        // scalar edges both run.
        let image = try ReferenceImages.load(Fixtures.coffee, as: format).cropped(to: Rect(x: 3, y: 5, width: 589, height: 387))
        for rotation in [Transform.Rotation.clockwise90, .rotate180, .clockwise270] {
            let ours = try Transform.apply(image, rotation: rotation, mirrored: false)
            var theirs = try PixelBuffer(width: ours.width, height: ours.height, format: format)
            try OpenCV.rotate(image, &theirs, degrees: rotation.rawValue)
            #expect(ours.packedBytes() == theirs.packedBytes(), "\(rotation)")
        }
        let mirrored = try Transform.apply(image, rotation: .none, mirrored: true)
        var theirs = try PixelBuffer(width: image.width, height: image.height, format: format)
        try OpenCV.mirror(image, &theirs)
        #expect(mirrored.packedBytes() == theirs.packedBytes())
    }

    @Test("rotating Y'CbCr buffers agrees with rotating their gray and colour", arguments: [PixelFormat.nv12VideoRange, .i420, .yuyv])
    func yCbCrRotation(format: PixelFormat) throws {
        let image = try ReferenceImages.load(Fixtures.astronaut, as: format)
        let rotations: [Transform.Rotation] = format == .yuyv ? [.rotate180] : [.clockwise90, .rotate180, .clockwise270]
        for rotation in rotations {
            for mirrored in [false, true] {
                let turned = try Transform.apply(image, rotation: rotation, mirrored: mirrored)
                let viaGray = try Transform.apply(PixelFormatConversion.convert(image, to: .gray8), rotation: rotation, mirrored: mirrored)
                #expect(try PixelFormatConversion.convert(turned, to: .gray8).packedBytes() == viaGray.packedBytes())
                let viaRGB = try Transform.apply(PixelFormatConversion.convert(image, to: .rgb24), rotation: rotation, mirrored: mirrored)
                #expect(ReferenceImages.difference(try PixelFormatConversion.convert(turned, to: .rgb24), viaRGB).max == 0)
            }
        }
        if format == .yuyv {
            #expect(throws: PixelBufferError.self) { try Transform.apply(image, rotation: .clockwise90, mirrored: false) }
        }
    }

    @Test("crop is a zero-copy view with the right pixels; strided views filter correctly")
    func crop() throws {
        let rgb = try ReferenceImages.load(Fixtures.astronaut, as: .rgb24)
        let region = Rect(x: 100, y: 50, width: 200, height: 120)
        let view = try rgb.cropped(to: region)
        #expect(view.width == 200 && view.plane(0).bytesPerRow == 512 * 3)
        let expected = rgb.withUnsafeBytes(ofPlane: 0) { b, p in
            Array(b[(60 * p.bytesPerRow + 110 * 3)..<(60 * p.bytesPerRow + 110 * 3 + 3)])
        }
        #expect(
            view.withUnsafeBytes(ofPlane: 0) { b, p in Array(b[(10 * p.bytesPerRow + 10 * 3)..<(10 * p.bytesPerRow + 10 * 3 + 3)]) }
                == expected)
        let nv12 = try ReferenceImages.load(Fixtures.astronaut, as: .nv12VideoRange)
        let nv12View = try nv12.cropped(to: region)
        #expect(
            try PixelFormatConversion.convert(nv12View, to: .gray8).packedBytes()
                == (try PixelFormatConversion.convert(nv12, to: .gray8).cropped(to: region).packedBytes()))
        // Errors that say what is wrong: the region and the image, not "invalid size 20x10".
        let outside = Rect(x: 500, y: 0, width: 20, height: 10)
        #expect(throws: PixelBufferError.regionOutsideImage(outside, width: 512, height: 512, format: .rgb24)) {
            try rgb.cropped(to: outside)
        }
        #expect(
            "\(PixelBufferError.regionOutsideImage(outside, width: 512, height: 512, format: .rgb24))".contains(
                "not inside the 512x512 image"))
        let odd = Rect(x: 1, y: 0, width: 10, height: 10)
        #expect(throws: PixelBufferError.regionOutsideImage(odd, width: 512, height: 512, format: .nv12VideoRange)) {
            try nv12.cropped(to: odd)
        }
        #expect(
            "\(PixelBufferError.regionOutsideImage(odd, width: 512, height: 512, format: .nv12VideoRange))".contains("x a multiple of 2"))
        // A bilinear resize between two formats names both.
        var rgbOut = try PixelBuffer(width: 100, height: 100, format: .rgb24)
        let grayIn = try PixelFormatConversion.convert(rgb, to: .gray8)
        #expect(
            throws: PixelBufferError.formatMismatch(source: .gray8, destination: .rgb24, operation: "bilinear resize (GRAY8, RGB24, BGRA)")
        ) {
            try Resize.bilinear(grayIn, into: &rgbOut)
        }
        // A strided view through a filter matches the same filter on a packed copy.
        let gray = try PixelFormatConversion.convert(rgb, to: .gray8).cropped(to: region)
        var a = try PixelBuffer(width: 200, height: 120, format: .gray8)
        var b = a.copy()
        try Filters.gaussianBlur(gray, into: &a, size: .five)
        try Filters.gaussianBlur(gray.copy(), into: &b, size: .five)
        #expect(a.packedBytes() == b.packedBytes())
    }

    @Test("wrong sizes and formats are thrown errors")
    func misuse() throws {
        let gray = try PixelBuffer(width: 64, height: 48, format: .gray8)
        var small = try PixelBuffer(width: 32, height: 24, format: .gray8)
        var rgb = try PixelBuffer(width: 64, height: 48, format: .rgb24)
        #expect(throws: PixelBufferError.self) { try Filters.boxBlur(gray, into: &small, size: .three) }
        #expect(throws: PixelBufferError.self) { try Filters.sobelMagnitude(rgb, into: &rgb) }
        #expect(throws: PixelBufferError.self) { try ColorConversion.convertToGray(gray, into: &rgb) }
        #expect(throws: PixelBufferError.self) { try Transform.apply(gray, rotation: .clockwise90, mirrored: false, into: &small) }
        var big = try PixelBuffer(width: 128, height: 96, format: .gray8)
        #expect(throws: PixelBufferError.self) { try Resize.area(gray, into: &big) }
        #expect(throws: PixelBufferError.self) { try PixelBuffer(width: 63, height: 48, format: .nv12VideoRange) }
        #expect(throws: PixelBufferError.self) { try PixelBuffer(width: 0, height: 48, format: .gray8) }
        let storage = PixelStorage(byteCount: 100)
        #expect(throws: PixelBufferError.self) { try PixelBuffer(width: 64, height: 48, format: .gray8, packedStorage: storage) }
        #expect(throws: PixelBufferError.self) {
            try PixelBuffer(width: 8, height: 8, format: .gray8, storage: PixelStorage(byteCount: 64), planes: [(0, 4)])
        }
    }
}
