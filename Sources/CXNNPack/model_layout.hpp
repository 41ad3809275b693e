// The layers an ONNX graph is read into for XNNPACK (model_layout.cpp): what network.cpp sets
// up as a subgraph per input size. Internal to CXNNPack.
#pragma once

#include "onnx_reader.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fkxnn::layout {

struct LoadError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

constexpr float kInfinity = std::numeric_limits<float>::infinity();

struct Layer {
    enum Kind { convolution, depthwise, deconvolution, add, relu, sigmoid } kind;
    int input = -1, second = -1, output = -1;  // value indices; value 0 is the network's input
    uint32_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    size_t in_channels = 0, out_channels = 0;
    float output_min = -kInfinity;
    std::vector<float> filter, bias;  // XNNPACK's layouts: OHWI (convolution, deconvolution), 1HWO (depthwise)
};

struct ModelData {
    std::vector<Layer> layers;
    std::vector<size_t> channels;            // per value
    std::vector<std::string> output_names;   // the graph's outputs, in order
    std::vector<int> output_values;
};

// Reads the graph into layers, checking the IR version, the operator set, every attribute and
// every shape a later step relies on; a graph it cannot compute exactly is LoadError naming why.
ModelData lay_out(onnx::Graph &g);

}  // namespace fkxnn::layout
