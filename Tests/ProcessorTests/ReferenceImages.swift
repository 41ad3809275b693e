import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// The reference image set: real photos in every format the filters take.
enum ReferenceImages {
    static let photos = [Fixtures.astronaut, Fixtures.coffee]

    static func load(_ url: URL, as format: PixelFormat) throws -> PixelBuffer {
        try JPEG.decode(ImageFile.read(url), to: format)
    }

    /// Largest absolute difference between two buffers of one shape, and how many bytes differ.
    static func difference(_ a: PixelBuffer, _ b: PixelBuffer) -> (max: Int, count: Int) {
        let x = a.packedBytes()
        let y = b.packedBytes()
        precondition(x.count == y.count)
        var worst = 0
        var count = 0
        for i in 0..<x.count where x[i] != y[i] {
            worst = max(worst, abs(Int(x[i]) - Int(y[i])))
            count += 1
        }
        return (worst, count)
    }
}
