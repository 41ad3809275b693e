// CXNNPack: a convolutional network read from an ONNX file and run by XNNPACK (Debian's
// libxnnpack, the library TFLite and MediaPipe run on the CPU), on fp32 NHWC tensors.
// Reads the operators CenterFace is made of: Conv (plain and depthwise), ConvTranspose,
// BatchNormalization after a ConvTranspose, Add, Relu, Sigmoid; any other is a load error.
// No C++ exception crosses this interface: every failure is a status and a message.
#ifndef CXNNPACK_H
#define CXNNPACK_H

#include <stddef.h>
#include <stdint.h>

// The thread pool's interface (Debian's libpthreadpool-dev), implemented by FrameKit's own pool
// in thread_pool.c: its calls are visible here for the tests that play XNNPACK's part.
#include <pthreadpool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FKXNN_OK = 0,
    FKXNN_INVALID_ARGUMENT = 1,
    /// The file is missing, not ONNX, or holds an operator or shape this reader does not run.
    FKXNN_LOAD_FAILED = 2,
    /// XNNPACK refused the graph or failed while running it.
    FKXNN_FAILED = 3,
} fkxnn_status;

/// An ONNX file's graph and weights, read and laid out for XNNPACK once. Immutable once
/// loaded: several networks (one per input size) share it, and may outlive it.
typedef struct fkxnn_model fkxnn_model;

/// The model set up for one input size, with its own buffers. One thread at a time.
typedef struct fkxnn_net fkxnn_net;

/// One output, copied out by name in NCHW order ([1, C, H, W], as ONNX gives it).
typedef struct {
    const char *name;
    float *data;
    size_t capacity;   // floats `data` holds
    int32_t shape[4];  // set by fkxnn_net_forward
    size_t count;      // floats written
} fkxnn_tensor;

fkxnn_status fkxnn_model_load(const char *onnx_path, fkxnn_model **out, char *message, size_t message_capacity);
void fkxnn_model_destroy(fkxnn_model *model);

/// Channels the model's input has (3 for an RGB network).
int32_t fkxnn_model_input_channels(const fkxnn_model *model);

/// The graph's outputs, in the file's order: how many, each one's name (valid while the model
/// lives; NULL out of range) and channels (0 out of range).
int32_t fkxnn_model_output_count(const fkxnn_model *model);
const char *fkxnn_model_output_name(const fkxnn_model *model, int32_t index);
int32_t fkxnn_model_output_channels(const fkxnn_model *model, int32_t index);

/// Sets the model up for a [1, height, width, C] input, with `threads` threads (1: the
/// caller's own; more: a pool of its own with threads - 1 workers).
fkxnn_status fkxnn_net_create(const fkxnn_model *model, int32_t height, int32_t width, int32_t threads, fkxnn_net **out,
                              char *message, size_t message_capacity);
void fkxnn_net_destroy(fkxnn_net *net);

/// Runs the network on `input` ([1, height, width, C] floats, `input_count` of them, borrowed
/// for the call) and copies the named outputs out.
fkxnn_status fkxnn_net_forward(fkxnn_net *net, const float *input, size_t input_count, fkxnn_tensor *outputs,
                               int32_t output_count, char *message, size_t message_capacity);

/// Jobs run by FrameKit's thread pool (thread_pool.c: the pthreadpool calls XNNPACK makes, on
/// threads that sleep rather than spin), since the process started: a test reads it to know that
/// XNNPACK's calls reach this pool and not libpthreadpool's.
uint64_t fkxnn_pool_jobs_run(void);

#ifdef __cplusplus
}
#endif

#endif
