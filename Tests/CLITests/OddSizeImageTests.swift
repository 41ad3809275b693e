import Foundation
import FrameKit
import FrameTestSupport
import Testing

/// Photos of odd width or height (500x375 is common) through `framekit detect --input` (#53).
@Suite("framekit detect on images of odd size")
struct OddSizeImageTests {
    /// The astronaut photo cut to `width` x `height`, as JPEG bytes.
    static func photo(width: Int, height: Int) throws -> [UInt8] {
        let image = try PixelBuffer(contentsOf: Fixtures.astronaut)
        return try JPEG.encode(image.cropped(to: Rect(x: 0, y: 0, width: width, height: height)).copy(), quality: 90)
    }

    @Test(
        "a single JPEG, PNG and PPM and an MJPEG of odd size are read whole, faces found", arguments: [(499, 375), (500, 375), (375, 500)])
    func oddSizes(width: Int, height: Int) throws {
        let folder = Fixtures.temporaryFolder()
        let bytes = try Self.photo(width: width, height: height)
        let single = folder.appendingPathComponent("odd.jpg")
        try Data(bytes).write(to: single)
        let stream = folder.appendingPathComponent("odd.mjpeg")
        try Data(bytes + bytes + bytes).write(to: stream)
        let cut = try PixelBuffer(contentsOf: Fixtures.astronaut).cropped(to: Rect(x: 0, y: 0, width: width, height: height)).copy()
        let png = folder.appendingPathComponent("odd.png")
        let ppm = folder.appendingPathComponent("odd.ppm")
        try cut.write(to: png)
        try cut.write(to: ppm)
        for (file, frames) in [(single, 1), (stream, 3), (png, 1), (ppm, 1)] {
            let run = try BinaryRunner.run("framekit", ["detect", "--input", file.path, "--mode", "full"])
            #expect(run.status == 0, "\(file.lastPathComponent) \(width)x\(height): \(run.stderr)")
            let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("{\"frame\"") }
            #expect(lines.count == frames, "\(run.stdout.prefix(400))")
            for line in lines {
                #expect(line.contains("\"width\": \(width), \"height\": \(height), \"faces\""), "\(line.prefix(200))")
                #expect(line.contains("\"confidence\""), "the astronaut's face: \(line.prefix(300))")
            }
        }
    }
}
