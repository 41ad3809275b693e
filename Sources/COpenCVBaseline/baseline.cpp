#include "COpenCVBaseline.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include <cstdio>
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
