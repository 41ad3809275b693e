// A model read into layers (model_layout.cpp) set up per input size as an XNNPACK subgraph and
// runtime, behind the C API of CXNNPack.h: no C++ exception crosses it.
#include "CXNNPack.h"
#include "model_layout.hpp"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using fkxnn::layout::lay_out;
using fkxnn::layout::Layer;
using fkxnn::layout::LoadError;
using fkxnn::onnx::Graph;
using fkxnn::layout::ModelData;
using fkxnn::layout::kInfinity;

void copy_message(char *message, size_t capacity, const std::string &text) {
    if (message == nullptr || capacity == 0) return;
    std::snprintf(message, capacity, "%s", text.c_str());
}

template <typename Body>
fkxnn_status guarded(char *message, size_t capacity, fkxnn_status failure, Body body) {
    try {
        return body();
    } catch (const LoadError &e) {
        copy_message(message, capacity, e.what());
        return FKXNN_LOAD_FAILED;
    } catch (const std::bad_alloc &) {
        copy_message(message, capacity, "out of memory");
        return FKXNN_FAILED;
    } catch (const std::exception &e) {
        copy_message(message, capacity, e.what());
        return failure;
    } catch (...) {
        copy_message(message, capacity, "unknown C++ exception");
        return failure;
    }
}

void check(xnn_status status, const char *call) {
    if (status != xnn_status_success)
        throw std::runtime_error(std::string(call) + " failed (xnn_status " + std::to_string(int(status)) + ")");
}

}  // namespace

struct fkxnn_model {
    std::shared_ptr<const ModelData> data;
};

struct fkxnn_net {
    std::shared_ptr<const ModelData> data;  // the static weights XNNPACK reads from
    pthreadpool_t pool = nullptr;
    xnn_subgraph_t subgraph = nullptr;
    xnn_runtime_t runtime = nullptr;
    size_t input_floats = 0;
    std::vector<std::array<size_t, 3>> output_shapes;  // H, W, C
    std::vector<std::vector<float>> staged;            // NHWC outputs
    std::vector<xnn_external_value> externals;

    ~fkxnn_net() {
        if (runtime) xnn_delete_runtime(runtime);
        if (subgraph) xnn_delete_subgraph(subgraph);
        if (pool) pthreadpool_destroy(pool);
    }
};

extern "C" fkxnn_status fkxnn_model_load(const char *onnx_path, fkxnn_model **out, char *message,
                                         size_t message_capacity) {
    if (out == nullptr || onnx_path == nullptr) {
        copy_message(message, message_capacity, "null argument");
        return FKXNN_INVALID_ARGUMENT;
    }
    *out = nullptr;
    return guarded(message, message_capacity, FKXNN_LOAD_FAILED, [&]() -> fkxnn_status {
        // One read of the whole file (an istreambuf_iterator copies it a byte at a time).
        std::ifstream file(onnx_path, std::ios::binary | std::ios::ate);
        if (!file) throw LoadError("cannot open the file");
        const std::streamoff size = file.tellg();
        if (size <= 0) throw LoadError("the file is empty");
        std::vector<uint8_t> bytes(static_cast<size_t>(size));
        file.seekg(0);
        if (!file.read(reinterpret_cast<char *>(bytes.data()), size)) throw LoadError("cannot read the file");
        Graph g;
        try {
            g = fkxnn::onnx::read_model(bytes.data(), bytes.size());
        } catch (const LoadError &) {
            throw;
        } catch (const std::runtime_error &e) {
            throw LoadError(std::string("not a readable ONNX model: ") + e.what());
        }
        auto data = std::make_shared<ModelData>(lay_out(g));
        if (xnn_initialize(nullptr) != xnn_status_success) throw std::runtime_error("xnn_initialize failed (no supported CPU?)");
        *out = new fkxnn_model{std::move(data)};
        return FKXNN_OK;
    });
}

extern "C" void fkxnn_model_destroy(fkxnn_model *model) { delete model; }

extern "C" int32_t fkxnn_model_input_channels(const fkxnn_model *model) {
    return model == nullptr ? 0 : int32_t(model->data->channels[0]);
}

extern "C" int32_t fkxnn_model_output_count(const fkxnn_model *model) {
    return model == nullptr ? 0 : int32_t(model->data->output_names.size());
}

extern "C" const char *fkxnn_model_output_name(const fkxnn_model *model, int32_t index) {
    if (model == nullptr || index < 0 || size_t(index) >= model->data->output_names.size()) return nullptr;
    return model->data->output_names[size_t(index)].c_str();
}

extern "C" int32_t fkxnn_model_output_channels(const fkxnn_model *model, int32_t index) {
    if (model == nullptr || index < 0 || size_t(index) >= model->data->output_values.size()) return 0;
    return int32_t(model->data->channels[size_t(model->data->output_values[size_t(index)])]);
}

extern "C" fkxnn_status fkxnn_net_create(const fkxnn_model *model, int32_t height, int32_t width, int32_t threads,
                                         fkxnn_net **out, char *message, size_t message_capacity) {
    if (model == nullptr || out == nullptr || height <= 0 || width <= 0 || height > 8192 || width > 8192 || threads < 1 ||
        threads > 256) {
        copy_message(message, message_capacity, "invalid argument");
        return FKXNN_INVALID_ARGUMENT;
    }
    *out = nullptr;
    return guarded(message, message_capacity, FKXNN_FAILED, [&]() -> fkxnn_status {
        auto net = std::make_unique<fkxnn_net>();
        net->data = model->data;
        const ModelData &m = *net->data;
        if (threads > 1) {
            net->pool = pthreadpool_create(size_t(threads));
            if (net->pool == nullptr) throw std::runtime_error("pthreadpool_create failed");
        }
        check(xnn_create_subgraph(uint32_t(1 + m.output_values.size()), 0, &net->subgraph), "xnn_create_subgraph");
        xnn_subgraph_t sg = net->subgraph;
        struct Shape { size_t h, w, c; uint32_t id; };
        std::vector<Shape> shapes(m.channels.size(), Shape{0, 0, 0, XNN_INVALID_VALUE_ID});
        auto define = [&](int v, size_t h, size_t w) {
            if (h == 0 || w == 0) throw std::runtime_error("the input is too small for this network");
            const size_t c = m.channels[size_t(v)];
            const size_t dims[4] = {1, h, w, c};
            uint32_t external = XNN_INVALID_VALUE_ID, flags = 0;
            if (v == 0) {
                external = 0;
                flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
            }
            for (size_t k = 0; k < m.output_values.size(); ++k)
                if (m.output_values[k] == v) {
                    external = uint32_t(k + 1);
                    flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
                }
            uint32_t id = 0;
            check(xnn_define_tensor_value(sg, xnn_datatype_fp32, 4, dims, nullptr, external, flags, &id), "xnn_define_tensor_value");
            shapes[size_t(v)] = {h, w, c, id};
        };
        auto constant = [&](const std::vector<float> &data, std::vector<size_t> dims) {
            uint32_t id = 0;
            check(xnn_define_tensor_value(sg, xnn_datatype_fp32, dims.size(), dims.data(), data.data(), XNN_INVALID_VALUE_ID, 0, &id),
                  "xnn_define_tensor_value");
            return id;
        };
        define(0, size_t(height), size_t(width));
        for (const Layer &l : m.layers) {
            const Shape x = shapes[size_t(l.input)];
            switch (l.kind) {
            case Layer::convolution:
            case Layer::depthwise: {
                const size_t span_h = l.dilation_h * (l.kernel_h - 1) + 1, span_w = l.dilation_w * (l.kernel_w - 1) + 1;
                const size_t ph = x.h + l.pad_top + l.pad_bottom, pw = x.w + l.pad_left + l.pad_right;
                if (ph < span_h || pw < span_w) throw std::runtime_error("the input is too small for this network");
                define(l.output, (ph - span_h) / l.stride_h + 1, (pw - span_w) / l.stride_w + 1);
                const uint32_t y = shapes[size_t(l.output)].id;
                if (l.kind == Layer::convolution) {
                    const uint32_t f = constant(l.filter, {l.out_channels, l.kernel_h, l.kernel_w, l.in_channels});
                    check(xnn_define_convolution_2d(sg, l.pad_top, l.pad_right, l.pad_bottom, l.pad_left, l.kernel_h, l.kernel_w,
                                                    l.stride_h, l.stride_w, l.dilation_h, l.dilation_w, 1, l.in_channels,
                                                    l.out_channels, l.output_min, kInfinity, x.id, f, constant(l.bias, {l.out_channels}),
                                                    y, 0),
                          "xnn_define_convolution_2d");
                } else {
                    const uint32_t f = constant(l.filter, {1, l.kernel_h, l.kernel_w, l.out_channels});
                    check(xnn_define_depthwise_convolution_2d(
                              sg, l.pad_top, l.pad_right, l.pad_bottom, l.pad_left, l.kernel_h, l.kernel_w, l.stride_h, l.stride_w,
                              l.dilation_h, l.dilation_w, uint32_t(l.out_channels / l.in_channels), l.in_channels, l.output_min,
                              kInfinity, x.id, f, constant(l.bias, {l.out_channels}), y, 0),
                          "xnn_define_depthwise_convolution_2d");
                }
                break;
            }
            case Layer::deconvolution: {
                const size_t full_h = (x.h - 1) * l.stride_h + l.dilation_h * (l.kernel_h - 1) + 1;
                const size_t full_w = (x.w - 1) * l.stride_w + l.dilation_w * (l.kernel_w - 1) + 1;
                if (full_h <= l.pad_top + l.pad_bottom || full_w <= l.pad_left + l.pad_right)
                    throw std::runtime_error("the input is too small for this network");
                define(l.output, full_h - l.pad_top - l.pad_bottom, full_w - l.pad_left - l.pad_right);
                const uint32_t f = constant(l.filter, {l.out_channels, l.kernel_h, l.kernel_w, l.in_channels});
                check(xnn_define_deconvolution_2d(sg, l.pad_top, l.pad_right, l.pad_bottom, l.pad_left, 0, 0, l.kernel_h, l.kernel_w,
                                                  l.stride_h, l.stride_w, l.dilation_h, l.dilation_w, 1, l.in_channels,
                                                  l.out_channels, l.output_min, kInfinity, x.id, f,
                                                  constant(l.bias, {l.out_channels}), shapes[size_t(l.output)].id, 0),
                      "xnn_define_deconvolution_2d");
                break;
            }
            case Layer::add: {
                const Shape b = shapes[size_t(l.second)];
                if (b.h != x.h || b.w != x.w) throw std::runtime_error("the input's size gives Add two different shapes");
                define(l.output, x.h, x.w);
                check(xnn_define_add2(sg, l.output_min, kInfinity, x.id, b.id, shapes[size_t(l.output)].id, 0), "xnn_define_add2");
                break;
            }
            case Layer::relu:
                define(l.output, x.h, x.w);
                check(xnn_define_clamp(sg, 0, kInfinity, x.id, shapes[size_t(l.output)].id, 0), "xnn_define_clamp");
                break;
            case Layer::sigmoid:
                define(l.output, x.h, x.w);
                check(xnn_define_sigmoid(sg, x.id, shapes[size_t(l.output)].id, 0), "xnn_define_sigmoid");
                break;
            }
        }
        // Workers sleep once a pass is done: pthreadpool's workers otherwise spin for tens of
        // milliseconds after each pass, on the cores the frame path and other sources need.
        check(xnn_create_runtime_v2(sg, net->pool, net->pool ? XNN_FLAG_YIELD_WORKERS : 0, &net->runtime), "xnn_create_runtime_v2");
        net->input_floats = size_t(height) * size_t(width) * m.channels[0];
        net->externals.push_back({0, nullptr});
        for (size_t k = 0; k < m.output_values.size(); ++k) {
            const Shape s = shapes[size_t(m.output_values[k])];
            net->output_shapes.push_back({s.h, s.w, s.c});
            net->staged.emplace_back(s.h * s.w * s.c);
            net->externals.push_back({uint32_t(k + 1), net->staged.back().data()});
        }
        *out = net.release();
        return FKXNN_OK;
    });
}

extern "C" void fkxnn_net_destroy(fkxnn_net *net) { delete net; }

extern "C" fkxnn_status fkxnn_net_forward(fkxnn_net *net, const float *input, size_t input_count, fkxnn_tensor *outputs,
                                          int32_t output_count, char *message, size_t message_capacity) {
    if (net == nullptr || input == nullptr || outputs == nullptr || output_count <= 0 || input_count != net->input_floats) {
        copy_message(message, message_capacity, "invalid argument");
        return FKXNN_INVALID_ARGUMENT;
    }
    return guarded(message, message_capacity, FKXNN_FAILED, [&]() -> fkxnn_status {
        // Names first: a wrong name or a short buffer fails before the network runs.
        std::vector<size_t> which(static_cast<size_t>(output_count));
        for (int32_t i = 0; i < output_count; ++i) {
            fkxnn_tensor &t = outputs[i];
            size_t k = 0;
            while (k < net->data->output_names.size() && (t.name == nullptr || net->data->output_names[k] != t.name)) ++k;
            if (k == net->data->output_names.size()) {
                copy_message(message, message_capacity, std::string("no output named ") + (t.name ? t.name : "(null)"));
                return FKXNN_INVALID_ARGUMENT;
            }
            const auto &s = net->output_shapes[k];
            if (t.data == nullptr || t.capacity < s[0] * s[1] * s[2]) {
                copy_message(message, message_capacity, "output does not fit the caller's buffer");
                return FKXNN_INVALID_ARGUMENT;
            }
            which[size_t(i)] = k;
        }
        net->externals[0].data = const_cast<float *>(input);  // read only: XNNPACK never writes an input
        check(xnn_setup_runtime(net->runtime, net->externals.size(), net->externals.data()), "xnn_setup_runtime");
        check(xnn_invoke_runtime(net->runtime), "xnn_invoke_runtime");
        for (int32_t i = 0; i < output_count; ++i) {
            fkxnn_tensor &t = outputs[i];
            const auto &s = net->output_shapes[which[size_t(i)]];
            const float *from = net->staged[which[size_t(i)]].data();
            const size_t H = s[0], W = s[1], C = s[2];
            for (size_t c = 0; c < C; ++c)
                for (size_t p = 0; p < H * W; ++p) t.data[c * H * W + p] = from[p * C + c];
            t.shape[0] = 1;
            t.shape[1] = int32_t(C);
            t.shape[2] = int32_t(H);
            t.shape[3] = int32_t(W);
            t.count = C * H * W;
        }
        return FKXNN_OK;
    });
}
