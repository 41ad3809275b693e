import Foundation

/// A small ONNX model written by hand (protobuf encoding, onnx.proto's field numbers): one
/// graph of Conv, ConvTranspose, BatchNormalization, Relu and Add nodes over float
/// initializers, for layouts the shipped model does not exercise (a BatchNormalization after a
/// plain or a depthwise convolution).
struct TinyONNX {
    enum Attribute {
        case int(Int64)
        case ints([Int64])
        case float(Float)
        case string(String)
        /// No type field: what a file older than ONNX's `type` wrote.
        case untypedInt(Int64)
    }

    struct Node {
        var op: String
        var inputs: [String]
        var output: String
        var attributes: [(String, Attribute)] = []
    }

    var nodes: [Node] = []
    var initializers: [(name: String, dims: [Int64], values: [Float])] = []
    var input = "x"
    var outputs: [String] = []
    var irVersion: Int64 = 7
    var opset: Int64 = 11

    /// The model's bytes.
    func encoded() -> [UInt8] {
        var graph = Proto()
        for node in nodes {
            var n = Proto()
            for i in node.inputs { n.string(1, i) }
            n.string(2, node.output)
            n.string(4, node.op)
            for (name, value) in node.attributes {
                var a = Proto()
                a.string(1, name)
                switch value {
                case .int(let v):
                    a.int(3, v)
                    a.int(20, 2)
                case .untypedInt(let v): a.int(3, v)
                case .ints(let vs):
                    for v in vs { a.int(8, v) }
                    a.int(20, 7)
                case .float(let v):
                    a.float(2, v)
                    a.int(20, 1)
                case .string(let s):
                    a.string(4, s)
                    a.int(20, 3)
                }
                n.message(5, a)
            }
            graph.message(1, n)
        }
        for tensor in initializers {
            var t = Proto()
            for d in tensor.dims { t.int(1, d) }
            t.int(2, 1) // FLOAT
            t.bytes(9, tensor.values.flatMap { v in withUnsafeBytes(of: v.bitPattern.littleEndian) { Array($0) } })
            t.string(8, tensor.name)
            graph.message(5, t)
        }
        for name in [input] + initializers.map(\.name) {
            var v = Proto()
            v.string(1, name)
            graph.message(11, v)
        }
        for name in outputs {
            var v = Proto()
            v.string(1, name)
            graph.message(12, v)
        }
        var opset = Proto()
        opset.string(1, "")
        opset.int(2, self.opset)
        var model = Proto()
        model.int(1, irVersion)
        model.message(7, graph)
        model.message(8, opset)
        return model.bytes
    }

    /// Protobuf's wire format, the four kinds used here.
    struct Proto {
        var bytes: [UInt8] = []
        mutating func varint(_ value: UInt64) {
            var v = value
            while v >= 0x80 {
                bytes.append(UInt8(v & 0x7F) | 0x80)
                v >>= 7
            }
            bytes.append(UInt8(v))
        }
        mutating func int(_ field: Int, _ value: Int64) {
            varint(UInt64(field << 3))
            varint(UInt64(bitPattern: value))
        }
        mutating func float(_ field: Int, _ value: Float) {
            varint(UInt64(field << 3 | 5))
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 }
        }
        mutating func bytes(_ field: Int, _ value: [UInt8]) {
            varint(UInt64(field << 3 | 2))
            varint(UInt64(value.count))
            bytes += value
        }
        mutating func string(_ field: Int, _ value: String) { bytes(field, Array(value.utf8)) }
        mutating func message(_ field: Int, _ value: Proto) { bytes(field, value.bytes) }
    }
}
