// The part of ONNX's protobuf encoding a convolutional network needs: the model's IR version and
// operator sets, the graph's nodes (with their attributes' values and types), its float
// initializers, inputs and outputs. Every length is checked against the bytes left, so a
// truncated or forged file is an error, never a read past the end. What the values mean (which
// attributes an operator may have, which versions are read) is checked by model_layout.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace fkxnn::onnx {

struct Tensor {
    std::vector<int64_t> dims;
    std::vector<float> data;  // empty for element types other than float
};

struct Attribute {
    int64_t i = 0;
    float f = 0;
    std::string s;
    std::vector<int64_t> ints;
    int type = 0;  // AttributeProto.AttributeType; 0 where the file does not say
};
// AttributeProto.AttributeType values.
constexpr int kAttributeTypeFloat = 1, kAttributeTypeInt = 2, kAttributeTypeString = 3, kAttributeTypeInts = 7;

struct Node {
    std::string op;
    std::string domain;  // "" (or "ai.onnx"): ONNX's own operators
    std::vector<std::string> inputs, outputs;
    std::map<std::string, Attribute> attributes;
};

struct Graph {
    int64_t ir_version = 0;
    std::map<std::string, int64_t> opsets;  // operator set imports: domain -> version
    std::vector<Node> nodes;
    std::map<std::string, Tensor> initializers;
    std::vector<std::string> inputs, outputs;
};

// Field numbers of onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto, TensorProto).
enum : int {
    kModelIRVersion = 1, kModelGraph = 7, kModelOpsetImport = 8,
    kOpsetDomain = 1, kOpsetVersion = 2,
    kGraphNode = 1, kGraphInitializer = 5, kGraphInput = 11, kGraphOutput = 12,
    kNodeInput = 1, kNodeOutput = 2, kNodeOpType = 4, kNodeAttribute = 5, kNodeDomain = 7,
    kAttributeName = 1, kAttributeFloat = 2, kAttributeInt = 3, kAttributeString = 4, kAttributeInts = 8,
    kAttributeType = 20,
    kTensorDims = 1, kTensorDataType = 2, kTensorFloatData = 4, kTensorName = 8, kTensorRawData = 9,
    kValueInfoName = 1,
};
constexpr int32_t kFloat = 1;  // TensorProto.DataType.FLOAT

class Reader {
  public:
    Reader(const uint8_t *begin, size_t count) : p_(begin), end_(begin + count) {}
    bool done() const { return p_ >= end_; }

    // The next field's number and wire type.
    std::pair<int, int> key() {
        const uint64_t k = varint();
        return {int(k >> 3), int(k & 7)};
    }
    uint64_t varint() {
        uint64_t value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (p_ >= end_) throw std::runtime_error("truncated varint");
            const uint8_t b = *p_++;
            value |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return value;
        }
        throw std::runtime_error("varint longer than 64 bits");
    }
    Reader message() {
        const uint64_t n = varint();
        if (n > uint64_t(end_ - p_)) throw std::runtime_error("field runs past the end of the file");
        Reader r(p_, size_t(n));
        p_ += n;
        return r;
    }
    std::string string() {
        Reader r = message();
        return std::string(reinterpret_cast<const char *>(r.p_), size_t(r.end_ - r.p_));
    }
    float fixed32() {
        if (end_ - p_ < 4) throw std::runtime_error("truncated float");
        float f;
        std::memcpy(&f, p_, 4);
        p_ += 4;
        return f;
    }
    void skip(int wire) {
        switch (wire) {
        case 0: varint(); break;
        case 1: advance(8); break;
        case 2: message(); break;
        case 5: advance(4); break;
        default: throw std::runtime_error("unknown protobuf wire type " + std::to_string(wire));
        }
    }
    void ints(int wire, std::vector<int64_t> &out) {
        if (wire == 2) {
            Reader packed = message();
            while (!packed.done()) out.push_back(int64_t(packed.varint()));
        } else if (wire == 0) {
            out.push_back(int64_t(varint()));
        } else {
            skip(wire);
        }
    }
    void floats(int wire, std::vector<float> &out) {
        if (wire == 2) {
            Reader packed = message();
            while (!packed.done()) out.push_back(packed.fixed32());
        } else if (wire == 5) {
            out.push_back(fixed32());
        } else {
            skip(wire);
        }
    }

  private:
    void advance(size_t n) {
        if (size_t(end_ - p_) < n) throw std::runtime_error("truncated field");
        p_ += n;
    }
    const uint8_t *p_;
    const uint8_t *end_;
};

inline Tensor read_tensor(Reader r, std::string &name) {
    Tensor t;
    int32_t type = 0;
    std::string raw;
    bool has_raw = false;
    while (!r.done()) {
        auto [field, wire] = r.key();
        if (field == kTensorDims) r.ints(wire, t.dims);
        else if (field == kTensorDataType && wire == 0) type = int32_t(r.varint());
        else if (field == kTensorFloatData) r.floats(wire, t.data);
        else if (field == kTensorName && wire == 2) name = r.string();
        else if (field == kTensorRawData && wire == 2) { raw = r.string(); has_raw = true; }
        else r.skip(wire);
    }
    if (type != kFloat) {
        t.data.clear();
        return t;
    }
    if (has_raw) {
        if (raw.size() % 4 != 0) throw std::runtime_error("initializer " + name + ": raw data not whole floats");
        t.data.resize(raw.size() / 4);
        std::memcpy(t.data.data(), raw.data(), raw.size());  // little-endian, as ONNX stores it
    }
    uint64_t elements = 1;
    for (int64_t d : t.dims) {
        if (d < 0 || d > (int64_t(1) << 31)) throw std::runtime_error("initializer " + name + ": bad dimension");
        elements *= uint64_t(d);
        if (elements > (uint64_t(1) << 31)) throw std::runtime_error("initializer " + name + ": too large");
    }
    if (elements != t.data.size()) throw std::runtime_error("initializer " + name + ": data does not match its dims");
    return t;
}

inline void read_attribute(Reader r, Node &node) {
    std::string name;
    Attribute a;
    while (!r.done()) {
        auto [field, wire] = r.key();
        if (field == kAttributeName && wire == 2) name = r.string();
        else if (field == kAttributeFloat && wire == 5) a.f = r.fixed32();
        else if (field == kAttributeInt && wire == 0) a.i = int64_t(r.varint());
        else if (field == kAttributeString && wire == 2) a.s = r.string();
        else if (field == kAttributeInts) r.ints(wire, a.ints);
        else if (field == kAttributeType && wire == 0) a.type = int(r.varint());
        else r.skip(wire);
    }
    if (node.attributes.count(name)) throw std::runtime_error(node.op + ": attribute '" + name + "' given twice");
    node.attributes[name] = a;
}

inline Node read_node(Reader r) {
    Node n;
    while (!r.done()) {
        auto [field, wire] = r.key();
        if (field == kNodeInput && wire == 2) n.inputs.push_back(r.string());
        else if (field == kNodeOutput && wire == 2) n.outputs.push_back(r.string());
        else if (field == kNodeOpType && wire == 2) n.op = r.string();
        else if (field == kNodeAttribute && wire == 2) read_attribute(r.message(), n);
        else if (field == kNodeDomain && wire == 2) n.domain = r.string();
        else r.skip(wire);
    }
    return n;
}

inline std::string read_value_name(Reader r) {
    std::string name;
    while (!r.done()) {
        auto [field, wire] = r.key();
        if (field == kValueInfoName && wire == 2) name = r.string();
        else r.skip(wire);
    }
    return name;
}

inline Graph read_model(const uint8_t *bytes, size_t count) {
    Reader model(bytes, count);
    Graph g;
    bool found = false;
    while (!model.done()) {
        auto [field, wire] = model.key();
        if (field == kModelIRVersion && wire == 0) {
            g.ir_version = int64_t(model.varint());
            continue;
        }
        if (field == kModelOpsetImport && wire == 2) {
            Reader o = model.message();
            std::string domain;
            int64_t version = 0;
            while (!o.done()) {
                auto [f, w] = o.key();
                if (f == kOpsetDomain && w == 2) domain = o.string();
                else if (f == kOpsetVersion && w == 0) version = int64_t(o.varint());
                else o.skip(w);
            }
            g.opsets[domain == "ai.onnx" ? "" : domain] = version;
            continue;
        }
        if (field != kModelGraph || wire != 2) {
            model.skip(wire);
            continue;
        }
        found = true;
        Reader r = model.message();
        while (!r.done()) {
            auto [f, w] = r.key();
            if (f == kGraphNode && w == 2) {
                g.nodes.push_back(read_node(r.message()));
            } else if (f == kGraphInitializer && w == 2) {
                std::string name;
                Tensor t = read_tensor(r.message(), name);
                g.initializers[name] = std::move(t);
            } else if (f == kGraphInput && w == 2) {
                g.inputs.push_back(read_value_name(r.message()));
            } else if (f == kGraphOutput && w == 2) {
                g.outputs.push_back(read_value_name(r.message()));
            } else {
                r.skip(w);
            }
        }
    }
    if (!found || g.nodes.empty()) throw std::runtime_error("no graph in the file (not an ONNX model)");
    return g;
}

}  // namespace fkxnn::onnx
