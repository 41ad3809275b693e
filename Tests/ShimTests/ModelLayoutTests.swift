import CXNNPack
import Foundation
import FrameTestSupport
import Testing

/// model_layout.cpp on graphs the shipped model does not have: a BatchNormalization folded into
/// a plain and into a depthwise convolution (the shipped model's follow a ConvTranspose), with
/// and without a Relu after it, each computed by XNNPACK against the same graph computed here
/// layer by layer; and attributes it must refuse.
@Suite("CXNNPack's model layout on small graphs written here")
struct ModelLayoutTests {
    static let (channels, height, width) = (3, 5, 6)

    /// Deterministic values in -1…1 (a weight, an input).
    static func values(_ count: Int, seed: Int) -> [Float] {
        (0..<count).map { i in Float(((i &* 7919 &+ seed &* 104_729) % 2001) - 1000) / 1000 }
    }

    /// Loads `model` and runs it on `input` (NCHW, `channels` x `height` x `width`); its one
    /// output, NCHW.
    static func run(_ model: TinyONNX, input nchw: [Float], channels: Int) throws -> [Float] {
        let file = Fixtures.temporaryFolder().appendingPathComponent("tiny.onnx")
        try Data(model.encoded()).write(to: file)
        let loaded = try XNNPackShimTests.Model(file.path)
        var message = [CChar](repeating: 0, count: 512)
        var net: OpaquePointer? = nil
        let created = fkxnn_net_create(loaded.raw, Int32(height), Int32(width), 1, &net, &message, message.count)
        guard created == FKXNN_OK, let net else { throw XNNPackShimTests.Failure(status: created, message: message) }
        defer { fkxnn_net_destroy(net) }
        var nhwc = [Float](repeating: 0, count: nchw.count)
        for c in 0..<channels {
            for p in 0..<(height * width) { nhwc[p * channels + c] = nchw[c * height * width + p] }
        }
        var output = [Float](repeating: .nan, count: 64 * height * width)
        let name = strdup(model.outputs[0])
        defer { free(name) }
        let status = nhwc.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                var tensors = [fkxnn_tensor(name: name, data: out.baseAddress, capacity: out.count, shape: (0, 0, 0, 0), count: 0)]
                let status = fkxnn_net_forward(net, input.baseAddress, input.count, &tensors, 1, &message, message.count)
                return (status, tensors[0].count)
            }
        }
        guard status.0 == FKXNN_OK else { throw XNNPackShimTests.Failure(status: status.0, message: message) }
        return Array(output.prefix(status.1))
    }

    /// A 3x3 convolution, stride 1, padded by 1, of `groups` groups, NCHW.
    static func convolution(_ x: [Float], inputs: Int, outputs: Int, groups: Int, weights w: [Float], bias: [Float]) -> [Float] {
        let (h, wd) = (height, width)
        let perGroup = inputs / groups
        var y = [Float](repeating: 0, count: outputs * h * wd)
        for o in 0..<outputs {
            let g = o / (outputs / groups)
            for r in 0..<h {
                for c in 0..<wd {
                    var sum = bias[o]
                    for i in 0..<perGroup {
                        for a in 0..<3 {
                            for b in 0..<3 {
                                let (rr, cc) = (r + a - 1, c + b - 1)
                                guard rr >= 0, rr < h, cc >= 0, cc < wd else { continue }
                                sum += w[((o * perGroup + i) * 3 + a) * 3 + b] * x[((g * perGroup + i) * h + rr) * wd + cc]
                            }
                        }
                    }
                    y[(o * h + r) * wd + c] = sum
                }
            }
        }
        return y
    }

    /// A BatchNormalization's 4 parameters for `count` channels (variances positive).
    static func normalization(_ count: Int, seed: Int) -> (scale: [Float], bias: [Float], mean: [Float], variance: [Float]) {
        (
            values(count, seed: seed), values(count, seed: seed + 1), values(count, seed: seed + 2),
            values(count, seed: seed + 3).map { 0.5 + abs($0) }
        )
    }

    @Test(
        "a BatchNormalization folded into a plain or a depthwise convolution, with or without a Relu after it, computes what the layers do one by one",
        arguments: [(false, false), (false, true), (true, false), (true, true)])
    func foldedNormalization(depthwise: Bool, relu: Bool) throws {
        let (c, epsilon) = (Self.channels, Float(1e-3))
        let x = Self.values(c * Self.height * Self.width, seed: 1)
        var model = TinyONNX()
        var expected = x
        var last = "x"
        let pads = TinyONNX.Attribute.ints([1, 1, 1, 1])
        let kernel = TinyONNX.Attribute.ints([3, 3])
        // A depthwise convolution never reads the network's input itself (lay_out): a plain
        // one comes first.
        if depthwise {
            let (w, b) = (Self.values(c * c * 9, seed: 2), Self.values(c, seed: 3))
            model.initializers += [("w0", [Int64(c), Int64(c), 3, 3], w), ("b0", [Int64(c)], b)]
            model.nodes.append(
                .init(op: "Conv", inputs: ["x", "w0", "b0"], output: "c0", attributes: [("kernel_shape", kernel), ("pads", pads)]))
            expected = Self.convolution(expected, inputs: c, outputs: c, groups: 1, weights: w, bias: b)
            last = "c0"
        }
        let outputs = depthwise ? c : 4
        let groups = depthwise ? c : 1
        let (w, b) = (Self.values(outputs * (c / groups) * 9, seed: 4), Self.values(outputs, seed: 5))
        model.initializers += [("w1", [Int64(outputs), Int64(c / groups), 3, 3], w), ("b1", [Int64(outputs)], b)]
        model.nodes.append(
            .init(
                op: "Conv", inputs: [last, "w1", "b1"], output: "c1",
                attributes: [("kernel_shape", kernel), ("pads", pads), ("group", .int(Int64(groups)))]))
        expected = Self.convolution(expected, inputs: c, outputs: outputs, groups: groups, weights: w, bias: b)
        let n = Self.normalization(outputs, seed: 6)
        model.initializers += [
            ("s", [Int64(outputs)], n.scale), ("t", [Int64(outputs)], n.bias), ("m", [Int64(outputs)], n.mean),
            ("v", [Int64(outputs)], n.variance)
        ]
        model.nodes.append(
            .init(op: "BatchNormalization", inputs: ["c1", "s", "t", "m", "v"], output: "n", attributes: [("epsilon", .float(epsilon))]))
        let plane = Self.height * Self.width
        for o in 0..<outputs {
            for p in 0..<plane {
                let v = expected[o * plane + p]
                expected[o * plane + p] = (v - n.mean[o]) / (n.variance[o] + epsilon).squareRoot() * n.scale[o] + n.bias[o]
            }
        }
        if relu {
            model.nodes.append(.init(op: "Relu", inputs: ["n"], output: "y"))
            expected = expected.map { max(0, $0) }
        }
        model.outputs = [relu ? "y" : "n"]
        let ours = try Self.run(model, input: x, channels: c)
        try #require(ours.count == expected.count, "\(ours.count) values, not \(expected.count)")
        let worst = zip(ours, expected).map { abs($0 - $1) / max(1, abs($1)) }.max() ?? .infinity
        #expect(worst < 1e-4, "worst difference \(worst)")
        // Not a trivial graph: the normalization moved the values, and (with a Relu) some are cut.
        #expect(Set(ours.map { ($0 * 100).rounded() }).count > 10)
    }

    @Test("auto_pad SAME, an attribute with no type, and a BatchNormalization in training mode are refused, each named")
    func refusals() throws {
        func model(_ attributes: [(String, TinyONNX.Attribute)], normalization: [(String, TinyONNX.Attribute)] = []) -> TinyONNX {
            var m = TinyONNX()
            m.initializers = [
                ("w", [2, 3, 3, 3], Self.values(54, seed: 1)), ("b", [2], [0, 0]), ("s", [2], [1, 1]), ("t", [2], [0, 0]),
                ("m", [2], [0, 0]), ("v", [2], [1, 1])
            ]
            m.nodes = [
                .init(op: "Conv", inputs: ["x", "w", "b"], output: "c", attributes: [("kernel_shape", .ints([3, 3]))] + attributes),
                .init(op: "BatchNormalization", inputs: ["c", "s", "t", "m", "v"], output: "y", attributes: normalization)
            ]
            m.outputs = ["y"]
            return m
        }
        func refusal(_ m: TinyONNX) -> String {
            do {
                _ = try Self.run(m, input: Self.values(3 * Self.height * Self.width, seed: 2), channels: 3)
                return "ran"
            } catch { return "\(error)" }
        }
        #expect(refusal(model([("pads", .ints([1, 1, 1, 1]))])) == "ran")
        #expect(refusal(model([("auto_pad", .string("SAME_UPPER"))])).contains("auto_pad SAME_UPPER is not read"))
        #expect(refusal(model([("group", .untypedInt(1))])).contains("attribute 'group' has no type"))
        #expect(refusal(model([], normalization: [("training_mode", .int(1))])).contains("training_mode 1 is not read"))
    }
}
