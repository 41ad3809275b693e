import CXNNPack
import Foundation
import FrameKit
import FrameTestSupport
import OpenCVReference
import Testing

/// CXNNPack: CenterFace's ONNX file read by its own reader and run by XNNPACK, checked against
/// OpenCV's dnn module running the same file on the same input.
@Suite("CenterFace run by XNNPACK through CXNNPack")
struct XNNPackShimTests {
    static let outputs = ["537", "538", "539", "540"] // heatmap, box scale, offset, landmarks
    static let channels = [1, 2, 2, 10]

    /// The astronaut photo (with its face) tiled over a `width` x `height` input, as NHWC and
    /// NCHW floats 0–255.
    static func input(width: Int, height: Int) throws -> (nhwc: [Float], nchw: [Float]) {
        let photo = try PixelBuffer(contentsOf: Fixtures.astronaut)
        var rgb = try PixelBuffer(width: photo.width, height: photo.height, format: .rgb24)
        try ColorConversion.convert(photo, into: &rgb)
        var nhwc = [Float](repeating: 0, count: 3 * width * height)
        var nchw = nhwc
        rgb.withUnsafeBytes(ofPlane: 0) { bytes, plane in
            for y in 0..<height {
                for x in 0..<width {
                    for c in 0..<3 {
                        let v = Float(bytes[(y % rgb.height) * plane.bytesPerRow + 3 * (x % rgb.width) + c])
                        nhwc[(y * width + x) * 3 + c] = v
                        nchw[(c * height + y) * width + x] = v
                    }
                }
            }
        }
        return (nhwc, nchw)
    }

    final class Model {
        let raw: OpaquePointer
        init(_ path: String) throws {
            var message = [CChar](repeating: 0, count: 512)
            var raw: OpaquePointer? = nil
            let status = fkxnn_model_load(path, &raw, &message, message.count)
            guard status == FKXNN_OK, let raw else { throw Failure(status: status, message: message) }
            self.raw = raw
        }
        deinit { fkxnn_model_destroy(raw) }
    }

    struct Failure: Error, CustomStringConvertible {
        var status: fkxnn_status
        var text: String
        init(status: fkxnn_status, message: [CChar]) {
            self.status = status
            text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        var description: String { "status \(status.rawValue): \(text)" }
    }

    /// Runs `model` at `width` x `height` on `threads` threads; the outputs in NCHW order.
    static func forward(_ model: Model, nhwc: [Float], width: Int, height: Int, threads: Int32, names: [String] = outputs)
        throws -> [[Float]]
    {
        var message = [CChar](repeating: 0, count: 512)
        var net: OpaquePointer? = nil
        let created = fkxnn_net_create(model.raw, Int32(height), Int32(width), threads, &net, &message, message.count)
        guard created == FKXNN_OK, let net else { throw Failure(status: created, message: message) }
        defer { fkxnn_net_destroy(net) }
        let cells = (width / 4) * (height / 4)
        var heatmap = [Float](repeating: .nan, count: channels[0] * cells)
        var scale = [Float](repeating: .nan, count: channels[1] * cells)
        var offset = [Float](repeating: .nan, count: channels[2] * cells)
        var landmarks = [Float](repeating: .nan, count: channels[3] * cells)
        let cNames = names.map { strdup($0) }
        defer { for name in cNames { free(name) } }
        let status = nhwc.withUnsafeBufferPointer { input in
            heatmap.withUnsafeMutableBufferPointer { b0 in
                scale.withUnsafeMutableBufferPointer { b1 in
                    offset.withUnsafeMutableBufferPointer { b2 in
                        landmarks.withUnsafeMutableBufferPointer { b3 in
                            var tensors = zip(cNames, [b0, b1, b2, b3]).map { name, b in
                                fkxnn_tensor(name: name, data: b.baseAddress, capacity: b.count, shape: (0, 0, 0, 0), count: 0)
                            }
                            return fkxnn_net_forward(
                                net, input.baseAddress, input.count, &tensors, Int32(tensors.count), &message, message.count)
                        }
                    }
                }
            }
        }
        guard status == FKXNN_OK else { throw Failure(status: status, message: message) }
        return [heatmap, scale, offset, landmarks]
    }

    @Test(
        "every output equals OpenCV dnn's on the same input, at the sizes a tracker uses, on one thread and two",
        arguments: [(640, 384), (320, 192), (128, 736)])
    func matchesOpenCV(size: (width: Int, height: Int)) throws {
        let path = try FaceDetector().modelURL.path
        let model = try Model(path)
        #expect(fkxnn_model_input_channels(model.raw) == 3)
        let (nhwc, nchw) = try Self.input(width: size.width, height: size.height)
        let theirs = try OpenCV.dnnForward(
            model: path, planar: nchw, channels: 3, height: size.height, width: size.width, outputs: Self.outputs)
        for threads: Int32 in [1, 2] {
            let ours = try Self.forward(model, nhwc: nhwc, width: size.width, height: size.height, threads: threads)
            for k in 0..<4 {
                #expect(ours[k].count == theirs[k].count)
                let worst = zip(ours[k], theirs[k]).map { abs($0 - $1) / max(1, abs($1)) }.max() ?? .infinity
                // Summation order differs (XNNPACK's kernels, OpenCV's): ~1e-3 at most, seen.
                #expect(worst < 1e-2, "output \(Self.outputs[k]) at \(size) on \(threads) threads: worst difference \(worst)")
            }
            // Where the photo's face fits in, it is in the heatmap: not two blank maps compared.
            if size.width >= 320 { #expect((ours[0].max() ?? 0) > 0.5) }
        }
    }

    @Test("a wrong output name, a short buffer or a wrong input size is refused before the network runs")
    func refusedCalls() throws {
        let model = try Model(try FaceDetector().modelURL.path)
        let (nhwc, _) = try Self.input(width: 64, height: 64)
        #expect(throws: Failure.self) {
            _ = try Self.forward(model, nhwc: nhwc, width: 64, height: 64, threads: 1, names: ["537", "538", "539", "nope"])
        }
        #expect(throws: Failure.self) { _ = try Self.forward(model, nhwc: Array(nhwc.dropLast()), width: 64, height: 64, threads: 1) }
        #expect(throws: Failure.self) { _ = try Self.forward(model, nhwc: nhwc, width: 64, height: 64, threads: 0) }
        // Too small for the network's strides: an error, not a crash.
        #expect(throws: Failure.self) { _ = try Self.forward(model, nhwc: [0, 0, 0], width: 1, height: 1, threads: 1) }
    }

    @Test("a truncated, forged or byte-flipped model file is a load error naming the cause, never a crash")
    func forgedModels() throws {
        let path = try FaceDetector().modelURL.path
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let folder = Fixtures.temporaryFolder()
        let file = folder.appendingPathComponent("forged.onnx")
        // Cut anywhere inside the graph (the last few hundred bytes are the opset and metadata).
        for length in stride(from: 0, to: bytes.count - 1000, by: bytes.count / 37) + [1, 2, 5, 100, 1000] {
            try bytes.prefix(length).write(to: file)
            #expect(throws: Failure.self, "cut at \(length)") { _ = try Model(file.path) }
            #expect(throws: FaceDetectorError.self) { _ = try FaceDetector(modelURL: file) }
        }
        // `bytes` with one byte of the first `pattern` (at `offset` from its start) set to
        // `value`, written to `file`.
        func forge(_ pattern: [UInt8], at offset: Int, to value: Character) throws {
            let found = try #require(bytes.firstRange(of: Data(pattern)), "no \(pattern) in the model")
            var forged = bytes
            forged[found.lowerBound + offset] = UInt8(ascii: value.unicodeScalars.first!)
            try forged.write(to: file)
        }
        // An operator the reader does not run, named in the error.
        try forge(Array("Sigmoid".utf8), at: 6, to: "x")
        do {
            _ = try FaceDetector(modelURL: file)
            Issue.record("a forged operator loaded")
        } catch {
            #expect("\(error)".contains("Sigmoix"), "\(error)")
        }
        let (nhwc, _) = try Self.input(width: 64, height: 64)
        // One digit of a name changed so that a node reads another value: the depthwise
        // convolution's output (366) is then read by nothing. XNNPACK clears such a value and
        // aborted on an assertion when the network was set up (a random flip did this in CI).
        // The dead layer is dropped: the file loads and runs. The Relu reads 363 instead, the
        // first convolution's output.
        try forge([0x0A, 0x03] + Array("366".utf8) + [0x12, 0x03] + Array("368".utf8), at: 4, to: "3")
        let outputs = try Self.forward(try Model(file.path), nhwc: nhwc, width: 64, height: 64, threads: 1)
        #expect(outputs.allSatisfy { $0.allSatisfy(\.isFinite) })
        // An attribute the reader does not know, one of the wrong type, an IR version or an
        // operator set it does not read: refused, named (the reader once took ONNX's default
        // for an attribute it did not find, and passed over one it did not know).
        func refusal() -> String {
            do {
                _ = try FaceDetector(modelURL: file)
                return "loaded"
            } catch { return "\(error)" }
        }
        try forge(Array("dilations".utf8), at: 8, to: "z")
        #expect(refusal().contains("attribute 'dilationz' is not read"), "\(refusal())")
        try forge(Array("dilations".utf8) + [0x40, 0x01, 0x40, 0x01, 0xA0, 0x01, 0x07], at: 15, to: "\u{02}")
        #expect(refusal().contains("attribute 'dilations' has the wrong type"), "\(refusal())")
        try forge([0x08, 0x04, 0x12, 0x07] + Array("pytorch".utf8), at: 1, to: "\u{02}")
        #expect(refusal().contains("IR version 2 is not read"), "\(refusal())")
        try forge([0x42, 0x04, 0x0A, 0x00, 0x10, 0x09], at: 5, to: "\u{18}")
        #expect(refusal().contains("ONNX operator set 24 is not read"), "\(refusal())")
        // A graph whose last output is another value: not CenterFace's form, whatever it runs.
        try forge([0x62, 0x1D, 0x0A, 0x03] + Array("540".utf8), at: 5, to: "2")
        #expect(refusal().contains("not a network of CenterFace's form"), "\(refusal())")
        try bytes.write(to: file)
        #expect(refusal() == "loaded")
        // Seeded single-byte changes (FRAMEKIT_FUZZ_SEED replays a failure): each file loads and
        // runs, or is refused. Digits of the names a node reads and writes, then any byte of the
        // header and first layers.
        var generator = SeededGenerator.fuzzing(default: 28)
        let header = bytes.prefix(4096)
        let names = header.indices.filter { i in
            i + 4 < header.endIndex && header[i] == 0x0A && header[i + 1] == 0x03
                && (i + 2..<i + 5).allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(header[$0]) }
        }
        for round in 0..<120 {
            var flipped = bytes
            if round < 60, let name = names.randomElement(using: &generator) {
                flipped[name + 2 + Int.random(in: 0..<3, using: &generator)] =
                    UInt8(ascii: "0") + UInt8.random(in: 0...9, using: &generator)
            } else {
                flipped[Int.random(in: 0..<header.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
            }
            try flipped.write(to: file)
            guard let model = try? Model(file.path) else { continue }
            _ = try? Self.forward(model, nhwc: nhwc, width: 64, height: 64, threads: 1)
        }
    }
}
