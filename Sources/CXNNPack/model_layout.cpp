// An ONNX graph read into XNNPACK's layers (model_layout.hpp): its versions and every attribute
// checked, weights transposed to XNNPACK's NHWC layouts, BatchNormalization folded into the layer
// before it, a Relu into the layer it follows.
#include "model_layout.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

namespace fkxnn::layout {

using onnx::Graph;
using onnx::Node;
using onnx::Tensor;

namespace {

// A copy, not a reference: the fallback is usually a temporary, gone by the time a reference
// to it is read (AddressSanitizer: stack-use-after-scope on a forged file without the attribute).
std::vector<int64_t> ints(const Node &n, const char *name, const std::vector<int64_t> &fallback) {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() || it->second.ints.empty() ? fallback : it->second.ints;
}

int64_t integer(const Node &n, const char *name, int64_t fallback) {
    auto it = n.attributes.find(name);
    return it == n.attributes.end() ? fallback : it->second.i;
}

uint32_t small(int64_t v, int64_t low, int64_t high, const std::string &what) {
    if (v < low || v > high) throw LoadError(what + " out of range: " + std::to_string(v));
    return uint32_t(v);
}

// XNNPACK's OHWI layout of a weight tensor whose element (o, i, a, b) is at `source(o, i, a, b)`.
template <typename Source>
std::vector<float> ohwi(size_t O, size_t I, size_t kh, size_t kw, const std::vector<float> &weights, Source source) {
    std::vector<float> filter(O * kh * kw * I);
    for (size_t o = 0; o < O; ++o)
        for (size_t i = 0; i < I; ++i)
            for (size_t a = 0; a < kh; ++a)
                for (size_t b = 0; b < kw; ++b) filter[((o * kh + a) * kw + b) * I + i] = weights[source(o, i, a, b)];
    return filter;
}

// The IR versions and ONNX operator sets whose Conv, ConvTranspose, BatchNormalization, Add,
// Relu and Sigmoid mean what lay_out computes: IR 3 (the first with operator set imports) to 11,
// opset 7 (numpy broadcasting for Add; no is_test or consumed_inputs) to 23 (ONNX 1.18: since
// opset 7 these operators changed only the element types they take).
constexpr int64_t kIRVersions[2] = {3, 11};
constexpr int64_t kOpsets[2] = {7, 23};

void check_versions(const Graph &g) {
    if (g.ir_version < kIRVersions[0] || g.ir_version > kIRVersions[1])
        throw LoadError("IR version " + std::to_string(g.ir_version) + " is not read (" + std::to_string(kIRVersions[0]) + "…" +
                        std::to_string(kIRVersions[1]) + " are)");
    auto onnx = g.opsets.find("");
    if (onnx == g.opsets.end()) throw LoadError("the model imports no ONNX operator set");
    if (onnx->second < kOpsets[0] || onnx->second > kOpsets[1])
        throw LoadError("ONNX operator set " + std::to_string(onnx->second) + " is not read (" + std::to_string(kOpsets[0]) + "…" +
                        std::to_string(kOpsets[1]) + " are)");
}

// Each operator's attributes lay_out reads, with their types. Any other is refused by name: an
// attribute passed over would change what the network computes without a word.
void check_attributes(const Node &n) {
    using namespace fkxnn::onnx;
    static const std::map<std::string, int> convolution = {
        {"kernel_shape", kAttributeTypeInts}, {"strides", kAttributeTypeInts}, {"dilations", kAttributeTypeInts},
        {"pads", kAttributeTypeInts}, {"group", kAttributeTypeInt}, {"auto_pad", kAttributeTypeString}};
    static const std::map<std::string, std::map<std::string, int>> known = [] {
        std::map<std::string, std::map<std::string, int>> k;
        k["Conv"] = convolution;
        k["ConvTranspose"] = convolution;
        k["ConvTranspose"]["output_padding"] = kAttributeTypeInts;
        k["ConvTranspose"]["output_shape"] = kAttributeTypeInts;
        k["BatchNormalization"] = {
            {"epsilon", kAttributeTypeFloat}, {"momentum", kAttributeTypeFloat}, {"spatial", kAttributeTypeInt},
            {"training_mode", kAttributeTypeInt}};
        k["Add"] = {};
        k["Relu"] = {};
        k["Sigmoid"] = {};
        return k;
    }();
    const std::string where = n.op + (n.outputs.empty() ? std::string() : " " + n.outputs[0]);
    if (!n.domain.empty() && n.domain != "ai.onnx") throw LoadError(where + ": operators of domain " + n.domain + " are not read");
    auto op = known.find(n.op);
    if (op == known.end()) return;  // lay_out refuses the operator itself, naming what it runs
    for (const auto &[name, a] : n.attributes) {
        auto type = op->second.find(name);
        if (type == op->second.end()) throw LoadError(where + ": attribute '" + name + "' is not read");
        // No type: which field holds the value is not said (a value in a field not read would be
        // taken as the default without a word).
        if (a.type == 0) throw LoadError(where + ": attribute '" + name + "' has no type");
        if (a.type != type->second) throw LoadError(where + ": attribute '" + name + "' has the wrong type");
    }
    auto attribute = [&](const char *name) { return n.attributes.find(name); };
    // VALID is no padding: what explicit zero pads (or none) say.
    auto zero = [&](const char *name) {
        auto a = attribute(name);
        return a == n.attributes.end() || std::all_of(a->second.ints.begin(), a->second.ints.end(), [](int64_t v) { return v == 0; });
    };
    if (auto a = attribute("auto_pad"); a != n.attributes.end() && a->second.s != "NOTSET" && !(a->second.s == "VALID" && zero("pads")))
        throw LoadError(where + ": auto_pad " + a->second.s + " is not read (only explicit pads)");
    if (!zero("output_padding")) throw LoadError(where + ": output_padding is not read");
    if (auto a = attribute("spatial"); a != n.attributes.end() && a->second.i != 1)
        throw LoadError(where + ": spatial " + std::to_string(a->second.i) + " is not read");
    if (auto a = attribute("training_mode"); a != n.attributes.end() && a->second.i != 0)
        throw LoadError(where + ": training_mode " + std::to_string(a->second.i) + " is not read (inference only)");
}

}  // namespace

ModelData lay_out(Graph &g) {
    check_versions(g);
    ModelData m;
    std::map<std::string, int> values;  // name -> value index
    std::map<std::string, int> consumers;
    for (const Node &n : g.nodes)
        for (const std::string &i : n.inputs) consumers[i]++;
    std::map<std::string, bool> is_output;
    for (const std::string &o : g.outputs) is_output[o] = true;

    std::string input;
    for (const std::string &i : g.inputs)
        if (!g.initializers.count(i)) {
            if (!input.empty()) throw LoadError("more than one input: " + input + ", " + i);
            input = i;
        }
    if (input.empty()) throw LoadError("the graph has no input");
    values[input] = 0;
    m.channels.push_back(0);  // set by the first convolution that reads it

    auto value = [&](const Node &n, size_t k) -> int {
        if (k >= n.inputs.size()) throw LoadError(n.op + " is missing input " + std::to_string(k));
        auto it = values.find(n.inputs[k]);
        if (it == values.end()) throw LoadError(n.op + " reads " + n.inputs[k] + ", which nothing before it makes");
        return it->second;
    };
    auto weight = [&](const Node &n, size_t k) -> const Tensor & {
        if (k >= n.inputs.size()) throw LoadError(n.op + " is missing input " + std::to_string(k));
        auto it = g.initializers.find(n.inputs[k]);
        if (it == g.initializers.end() || it->second.data.empty())
            throw LoadError(n.op + "'s input " + n.inputs[k] + " is not a float initializer");
        return it->second;
    };
    auto make = [&](const Node &n, size_t channels) -> int {
        if (n.outputs.empty()) throw LoadError(n.op + " has no output");
        const int index = int(m.channels.size());
        m.channels.push_back(channels);
        values[n.outputs[0]] = index;
        return index;
    };
    // Where a fusable layer's output can take a following Relu or BatchNormalization: it has one
    // reader and is not one of the graph's outputs.
    std::vector<int> producer;  // value -> layer index, -1 for the input
    producer.push_back(-1);
    auto fusable = [&](int v, const std::string &name) {
        return v > 0 && producer[size_t(v)] >= 0 && consumers[name] == 1 && !is_output[name];
    };
    auto need_channels = [&](int v, size_t c, const std::string &what) {
        if (m.channels[size_t(v)] == 0 && v == 0) m.channels[0] = c;
        if (m.channels[size_t(v)] != c)
            throw LoadError(what + ": expects " + std::to_string(c) + " channels, gets " + std::to_string(m.channels[size_t(v)]));
    };

    for (const Node &n : g.nodes) {
        check_attributes(n);
        if (n.op == "Conv" || n.op == "ConvTranspose") {
            const int x = value(n, 0);
            const Tensor &w = weight(n, 1);
            if (w.dims.size() != 4) throw LoadError(n.op + " weights are not 4-D");
            Layer l{};
            const auto kernel = ints(n, "kernel_shape", {w.dims[2], w.dims[3]});
            const auto strides = ints(n, "strides", {1, 1});
            const auto dilations = ints(n, "dilations", {1, 1});
            const auto pads = ints(n, "pads", {0, 0, 0, 0});
            if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2 || pads.size() != 4)
                throw LoadError(n.op + ": only 2-D kernels are read");
            if (kernel[0] != w.dims[2] || kernel[1] != w.dims[3]) throw LoadError(n.op + ": kernel_shape differs from its weights");
            l.kernel_h = small(kernel[0], 1, 15, "kernel height");
            l.kernel_w = small(kernel[1], 1, 15, "kernel width");
            l.stride_h = small(strides[0], 1, 8, "stride");
            l.stride_w = small(strides[1], 1, 8, "stride");
            l.dilation_h = small(dilations[0], 1, 8, "dilation");
            l.dilation_w = small(dilations[1], 1, 8, "dilation");
            l.pad_top = small(pads[0], 0, 15, "padding");
            l.pad_left = small(pads[1], 0, 15, "padding");
            l.pad_bottom = small(pads[2], 0, 15, "padding");
            l.pad_right = small(pads[3], 0, 15, "padding");
            const int64_t group = integer(n, "group", 1);
            const size_t kh = l.kernel_h, kw = l.kernel_w;
            l.input = x;
            if (n.op == "Conv") {
                const size_t O = size_t(small(w.dims[0], 1, 1 << 16, "output channels"));
                const size_t I = size_t(small(w.dims[1], 1, 1 << 16, "input channels"));
                if (group == 1) {
                    need_channels(x, I, "Conv " + n.outputs.at(0));
                    l.kind = Layer::convolution;
                    l.filter = ohwi(O, I, kh, kw, w.data,
                                    [&](size_t o, size_t i, size_t a, size_t b) { return ((o * I + i) * kh + a) * kw + b; });
                } else if (I == 1 && x > 0 && size_t(group) == m.channels[size_t(x)] && O % size_t(group) == 0) {
                    l.kind = Layer::depthwise;
                    l.filter.resize(kh * kw * O);
                    for (size_t o = 0; o < O; ++o)
                        for (size_t a = 0; a < kh; ++a)
                            for (size_t b = 0; b < kw; ++b) l.filter[(a * kw + b) * O + o] = w.data[(o * kh + a) * kw + b];
                } else {
                    throw LoadError("Conv " + n.outputs.at(0) + ": groups other than 1 or one per channel are not read");
                }
                l.in_channels = m.channels[size_t(x)];
                l.out_channels = O;
            } else {
                if (group != 1) throw LoadError("ConvTranspose with groups is not read");
                const size_t I = size_t(small(w.dims[0], 1, 1 << 16, "input channels"));
                const size_t O = size_t(small(w.dims[1], 1, 1 << 16, "output channels"));
                need_channels(x, I, "ConvTranspose " + n.outputs.at(0));
                if (!ints(n, "output_shape", {}).empty()) throw LoadError("ConvTranspose with output_shape is not read");
                l.kind = Layer::deconvolution;
                // ONNX's ConvTranspose weights are IOHW.
                l.filter = ohwi(O, I, kh, kw, w.data,
                                [&](size_t o, size_t i, size_t a, size_t b) { return ((i * O + o) * kh + a) * kw + b; });
                l.in_channels = I;
                l.out_channels = O;
            }
            if (n.inputs.size() > 2) {
                const Tensor &b = weight(n, 2);
                if (b.data.size() != l.out_channels) throw LoadError(n.op + " bias does not match its output channels");
                l.bias = b.data;
            } else {
                l.bias.assign(l.out_channels, 0.f);
            }
            l.output = make(n, l.out_channels);
            m.layers.push_back(std::move(l));
            producer.push_back(int(m.layers.size() - 1));
        } else if (n.op == "BatchNormalization") {
            const int x = value(n, 0);
            if (!fusable(x, n.inputs[0])) throw LoadError("a BatchNormalization not right after a convolution is not read");
            Layer &l = m.layers[size_t(producer[size_t(x)])];
            if (l.kind == Layer::add || l.kind == Layer::relu || l.kind == Layer::sigmoid || l.output_min != -kInfinity)
                throw LoadError("a BatchNormalization not right after a convolution is not read");
            const size_t C = l.out_channels;
            const Tensor &gamma = weight(n, 1), &beta = weight(n, 2), &mean = weight(n, 3), &var = weight(n, 4);
            if (gamma.data.size() != C || beta.data.size() != C || mean.data.size() != C || var.data.size() != C)
                throw LoadError("BatchNormalization does not match its channels");
            auto it = n.attributes.find("epsilon");
            const float epsilon = it == n.attributes.end() ? 1e-5f : it->second.f;
            const size_t per_channel = l.filter.size() / C;
            for (size_t c = 0; c < C; ++c) {
                const float s = gamma.data[c] / std::sqrt(var.data[c] + epsilon);
                if (!std::isfinite(s)) throw LoadError("BatchNormalization has a non-finite scale");
                for (size_t k = 0; k < per_channel; ++k) {
                    // OHWI and 1HWO: the output channel is the slowest or the fastest index.
                    float &f = l.kind == Layer::depthwise ? l.filter[k * C + c] : l.filter[c * per_channel + k];
                    f *= s;
                }
                l.bias[c] = (l.bias[c] - mean.data[c]) * s + beta.data[c];
            }
            if (n.outputs.empty()) throw LoadError("BatchNormalization has no output");
            values[n.outputs[0]] = x;  // the same value, now normalised
        } else if (n.op == "Relu") {
            const int x = value(n, 0);
            if (n.outputs.empty()) throw LoadError("Relu has no output");
            if (fusable(x, n.inputs[0]) && m.layers[size_t(producer[size_t(x)])].kind != Layer::sigmoid) {
                m.layers[size_t(producer[size_t(x)])].output_min = 0;
                values[n.outputs[0]] = x;
                continue;
            }
            Layer l{};
            l.kind = Layer::relu;
            l.input = x;
            l.output = make(n, m.channels[size_t(x)]);
            m.layers.push_back(std::move(l));
            producer.push_back(int(m.layers.size() - 1));
        } else if (n.op == "Add" || n.op == "Sigmoid") {
            Layer l{};
            l.kind = n.op == "Add" ? Layer::add : Layer::sigmoid;
            l.input = value(n, 0);
            if (l.kind == Layer::add) {
                l.second = value(n, 1);
                if (m.channels[size_t(l.input)] != m.channels[size_t(l.second)]) throw LoadError("Add of different channels");
            }
            l.output = make(n, m.channels[size_t(l.input)]);
            m.layers.push_back(std::move(l));
            producer.push_back(int(m.layers.size() - 1));
        } else {
            throw LoadError("operator " + n.op + " is not read (CXNNPack runs Conv, ConvTranspose, "
                            "BatchNormalization, Add, Relu and Sigmoid)");
        }
    }
    if (m.channels[0] == 0) throw LoadError("the input is not read by a convolution");
    for (const std::string &o : g.outputs) {
        auto it = values.find(o);
        if (it == values.end() || it->second == 0) throw LoadError("output " + o + " is not made by the graph");
        for (int v : m.output_values)
            if (v == it->second) throw LoadError("two outputs name one value");
        m.output_names.push_back(o);
        m.output_values.push_back(it->second);
    }
    if (m.output_names.empty()) throw LoadError("the graph has no output");
    // Layers whose output nothing reads (a dead branch: in a forged file, one digit of a name
    // changed is enough) are dropped. XNNPACK clears a value no node reads, and the setup of
    // the node that writes it then aborts on an assertion (seen in CI: a byte-flipped model).
    // Layers come in the order they are read, so one pass from the end finds whole dead chains.
    std::vector<bool> read(m.channels.size(), false);
    for (int v : m.output_values) read[size_t(v)] = true;
    std::vector<Layer> live;
    for (size_t k = m.layers.size(); k-- > 0;) {
        Layer &l = m.layers[k];
        if (!read[size_t(l.output)]) continue;
        read[size_t(l.input)] = true;
        if (l.kind == Layer::add) read[size_t(l.second)] = true;
        live.push_back(std::move(l));
    }
    if (!read[0]) throw LoadError("no output depends on the input");
    m.layers.assign(std::make_move_iterator(live.rbegin()), std::make_move_iterator(live.rend()));
    return m;
}

}  // namespace fkxnn::layout
