#include "COpenCVBaseline.h"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include <exception>
#include <stdexcept>

namespace {
cv::Mat wrap(const fkcvb_image &image) {
    return cv::Mat(image.rows, image.cols, CV_8UC(image.channels), image.data, image.step);
}

template <typename Body>
int guarded(char *message, size_t capacity, Body body) {
    try {
        body();
        return 0;
    } catch (const std::exception &e) {
        if (message && capacity) std::snprintf(message, capacity, "%s", e.what());
    } catch (...) {
        if (message && capacity) std::snprintf(message, capacity, "unknown C++ exception");
    }
    return -1;
}

// OpenCV may reallocate an output whose size or type it does not like; that would silently
// write elsewhere, so insist that the result landed in the caller's buffer.
void require_in_place(const cv::Mat &out, const fkcvb_image &dst) {
    if (out.data != dst.data) throw std::runtime_error("output shape mismatch: OpenCV reallocated dst");
}
int cv_code(int32_t code) {
    switch (code) {
    case FKCVB_BGRA2GRAY: return cv::COLOR_BGRA2GRAY;
    case FKCVB_RGB2GRAY: return cv::COLOR_RGB2GRAY;
    case FKCVB_YUV2GRAY_420: return cv::COLOR_YUV2GRAY_420;
    case FKCVB_YUV2GRAY_YUY2: return cv::COLOR_YUV2GRAY_YUY2;
    case FKCVB_YUV2RGB_NV12: return cv::COLOR_YUV2RGB_NV12;
    case FKCVB_YUV2BGRA_NV12: return cv::COLOR_YUV2BGRA_NV12;
    case FKCVB_YUV2RGB_I420: return cv::COLOR_YUV2RGB_I420;
    case FKCVB_YUV2BGRA_I420: return cv::COLOR_YUV2BGRA_I420;
    case FKCVB_YUV2RGB_YUY2: return cv::COLOR_YUV2RGB_YUY2;
    case FKCVB_YUV2BGRA_YUY2: return cv::COLOR_YUV2BGRA_YUY2;
    case FKCVB_RGB2YUV_I420: return cv::COLOR_RGB2YUV_I420;
    case FKCVB_BGRA2YUV_I420: return cv::COLOR_BGRA2YUV_I420;
    default: throw std::invalid_argument("unknown fkcvb_color_code");
    }
}
} // namespace

extern "C" int fkcvb_cvt_color(fkcvb_image src, fkcvb_image dst, int32_t code, char *m, size_t c) {
    return guarded(m, c, [&] { cv::Mat out = wrap(dst); cv::cvtColor(wrap(src), out, cv_code(code)); require_in_place(out, dst); });
}
extern "C" int fkcvb_resize(fkcvb_image src, fkcvb_image dst, int32_t interpolation, char *m, size_t c) {
    return guarded(m, c, [&] {
        cv::Mat out = wrap(dst);
        cv::resize(wrap(src), out, cv::Size(dst.cols, dst.rows), 0, 0, interpolation);
        require_in_place(out, dst);
    });
}
extern "C" int fkcvb_box_blur(fkcvb_image src, fkcvb_image dst, int32_t k, char *m, size_t c) {
    return guarded(m, c, [&] {
        cv::Mat out = wrap(dst);
        cv::blur(wrap(src), out, cv::Size(k, k), cv::Point(-1, -1), cv::BORDER_REPLICATE);
        require_in_place(out, dst);
    });
}
extern "C" int fkcvb_gaussian_blur(fkcvb_image src, fkcvb_image dst, int32_t k, char *m, size_t c) {
    return guarded(m, c, [&] {
        cv::Mat out = wrap(dst);
        cv::GaussianBlur(wrap(src), out, cv::Size(k, k), 0, 0, cv::BORDER_REPLICATE);
        require_in_place(out, dst);
    });
}
extern "C" int fkcvb_sobel_magnitude(fkcvb_image src, fkcvb_image dst, char *m, size_t c) {
    return guarded(m, c, [&] {
        cv::Mat dx, dy, adx, ady, out = wrap(dst);
        cv::Sobel(wrap(src), dx, CV_16S, 1, 0, 3, 1, 0, cv::BORDER_REPLICATE);
        cv::Sobel(wrap(src), dy, CV_16S, 0, 1, 3, 1, 0, cv::BORDER_REPLICATE);
        cv::convertScaleAbs(dx, adx);
        cv::convertScaleAbs(dy, ady);
        cv::add(adx, ady, out); // saturating
        require_in_place(out, dst);
    });
}
extern "C" int fkcvb_threshold(fkcvb_image src, fkcvb_image dst, double t, double maxv, char *m, size_t c) {
    return guarded(m, c, [&] {
        cv::Mat out = wrap(dst);
        cv::threshold(wrap(src), out, t, maxv, cv::THRESH_BINARY);
        require_in_place(out, dst);
    });
}
extern "C" int fkcvb_equalize_hist(fkcvb_image src, fkcvb_image dst, char *m, size_t c) {
    return guarded(m, c, [&] { cv::Mat out = wrap(dst); cv::equalizeHist(wrap(src), out); require_in_place(out, dst); });
}
extern "C" int fkcvb_rotate(fkcvb_image src, fkcvb_image dst, int32_t r, char *m, size_t c) {
    return guarded(m, c, [&] { cv::Mat out = wrap(dst); cv::rotate(wrap(src), out, r); require_in_place(out, dst); });
}
extern "C" int fkcvb_flip(fkcvb_image src, fkcvb_image dst, int32_t f, char *m, size_t c) {
    return guarded(m, c, [&] { cv::Mat out = wrap(dst); cv::flip(wrap(src), out, f); require_in_place(out, dst); });
}
extern "C" void fkcvb_set_num_threads(int32_t threads) { cv::setNumThreads(threads); }

extern "C" int fkcvb_video_probe(const char *path, int32_t backend, int32_t *decoded, int32_t *header_frames, int32_t *width,
                                 int32_t *height, double *fps, char *m, size_t c) {
    int opened = 0;
    int status = guarded(m, c, [&] {
        cv::VideoCapture capture(path, backend == 0 ? cv::CAP_FFMPEG : cv::CAP_OPENCV_MJPEG);
        if (!capture.isOpened()) return;
        opened = 1;
        *header_frames = (int32_t)capture.get(cv::CAP_PROP_FRAME_COUNT);
        *width = (int32_t)capture.get(cv::CAP_PROP_FRAME_WIDTH);
        *height = (int32_t)capture.get(cv::CAP_PROP_FRAME_HEIGHT);
        *fps = capture.get(cv::CAP_PROP_FPS);
        cv::Mat frame;
        int32_t n = 0;
        while (capture.read(frame)) ++n;
        *decoded = n;
    });
    if (status != 0) return -1;
    if (!opened && m && c) std::snprintf(m, c, "VideoCapture could not open the file");
    return opened ? 0 : -1;
}

extern "C" int fkcvb_centerface(const char *model, fkcvb_image rgb, int32_t content_width, int32_t content_height,
                                float threshold, float *boxes, int32_t capacity, char *message,
                                size_t message_capacity) {
    try {
        cv::dnn::Net net = cv::dnn::readNetFromONNX(model);
        const cv::Mat image(rgb.rows, rgb.cols, CV_8UC3, rgb.data, rgb.step);
        cv::Mat resized;
        cv::resize(image, resized, cv::Size(content_width, content_height), 0, 0, cv::INTER_LINEAR);
        const int w = (content_width + 31) / 32 * 32, h = (content_height + 31) / 32 * 32;
        cv::Mat padded;
        cv::copyMakeBorder(resized, padded, 0, h - content_height, 0, w - content_width, cv::BORDER_CONSTANT,
                           cv::Scalar(0, 0, 0));
        net.setInput(cv::dnn::blobFromImage(padded, 1.0, cv::Size(), cv::Scalar(), false, false));
        std::vector<cv::Mat> out;
        net.forward(out, std::vector<cv::String>{"537", "538", "539", "540"});
        const int gh = out[0].size[2], gw = out[0].size[3], n = gh * gw;
        const float *heat = out[0].ptr<float>(), *scale = out[1].ptr<float>(), *offset = out[2].ptr<float>();
        struct Box { float x0, y0, x1, y1, s; };
        std::vector<Box> found;
        for (int r = 0; r < gh; ++r)
            for (int c = 0; c < gw; ++c) {
                const int i = r * gw + c;
                if (heat[i] <= threshold) continue;
                const float s0 = std::exp(scale[i]) * 4, s1 = std::exp(scale[n + i]) * 4;
                float x0 = std::max(0.f, (c + offset[n + i] + 0.5f) * 4 - s1 / 2);
                float y0 = std::max(0.f, (r + offset[i] + 0.5f) * 4 - s0 / 2);
                x0 = std::min(x0, (float)content_width);
                y0 = std::min(y0, (float)content_height);
                found.push_back({x0, y0, std::min(x0 + s1, (float)content_width), std::min(y0 + s0, (float)content_height), heat[i]});
            }
        std::sort(found.begin(), found.end(), [](const Box &a, const Box &b) { return a.s > b.s; });
        std::vector<Box> kept;
        for (const Box &b : found) {
            bool suppressed = false;
            for (const Box &k : kept) {
                const float iw = std::max(0.f, std::min(b.x1, k.x1) - std::max(b.x0, k.x0));
                const float ih = std::max(0.f, std::min(b.y1, k.y1) - std::max(b.y0, k.y0));
                const float inter = iw * ih;
                if (inter / ((b.x1 - b.x0) * (b.y1 - b.y0) + (k.x1 - k.x0) * (k.y1 - k.y0) - inter) >= 0.3f) {
                    suppressed = true;
                    break;
                }
            }
            if (!suppressed) kept.push_back(b);
        }
        int32_t count = 0;
        for (const Box &b : kept) {
            if (count >= capacity) break;
            float *o = boxes + 5 * count++;
            o[0] = b.x0; o[1] = b.y0; o[2] = b.x1; o[3] = b.y1; o[4] = b.s;
        }
        return count;
    } catch (const std::exception &e) {
        std::snprintf(message, message_capacity, "%s", e.what());
        return -1;
    }
}

extern "C" int64_t fkcvb_dnn_forward(const char *model, const float *input, int32_t channels, int32_t height,
                                     int32_t width, const char *const *names, int32_t name_count, float *out,
                                     size_t capacity, int64_t *counts, char *message, size_t message_capacity) {
    try {
        cv::dnn::Net net = cv::dnn::readNetFromONNX(model);
        const int dims[4] = {1, channels, height, width};
        net.setInput(cv::Mat(4, dims, CV_32F, const_cast<float *>(input)));
        std::vector<cv::String> wanted(names, names + name_count);
        std::vector<cv::Mat> outputs;
        net.forward(outputs, wanted);
        size_t written = 0;
        for (int32_t i = 0; i < name_count; ++i) {
            const cv::Mat m = outputs[(size_t)i].isContinuous() ? outputs[(size_t)i] : outputs[(size_t)i].clone();
            if (written + m.total() > capacity) {
                if (message && message_capacity) std::snprintf(message, message_capacity, "outputs do not fit");
                return -1;
            }
            std::memcpy(out + written, m.ptr<float>(), m.total() * sizeof(float));
            counts[i] = (int64_t)m.total();
            written += m.total();
        }
        return (int64_t)written;
    } catch (const std::exception &e) {
        if (message && message_capacity) std::snprintf(message, message_capacity, "%s", e.what());
        return -1;
    }
}
