#include "COpenCVShim.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <vector>

struct fkcv_cascade {
    cv::CascadeClassifier classifier;
    std::vector<cv::Rect> scratch; // reused between calls: no allocation per frame once warm
};

namespace {
void copy_message(char *dst, size_t capacity, const char *text) {
    if (dst == nullptr || capacity == 0) return;
    std::snprintf(dst, capacity, "%s", text);
}

// Runs `body`, turning every exception into a status: the one place C++ errors stop.
template <typename Body>
fkcv_status guarded(char *message, size_t capacity, Body body) {
    try {
        return body();
    } catch (const cv::Exception &e) {
        copy_message(message, capacity, e.what());
        return FKCV_OPENCV_EXCEPTION;
    } catch (const std::exception &e) {
        copy_message(message, capacity, e.what());
        return FKCV_STD_EXCEPTION;
    } catch (...) {
        copy_message(message, capacity, "unknown C++ exception");
        return FKCV_UNKNOWN_EXCEPTION;
    }
}
} // namespace

extern "C" fkcv_status fkcv_cascade_create(const char *path, fkcv_cascade **out, char *message,
                                           size_t message_capacity) {
    if (out == nullptr || path == nullptr) {
        copy_message(message, message_capacity, "null argument");
        return FKCV_INVALID_ARGUMENT;
    }
    *out = nullptr;
    return guarded(message, message_capacity, [&]() -> fkcv_status {
        fkcv_cascade *cascade = new fkcv_cascade();
        bool loaded = false;
        try {
            loaded = cascade->classifier.load(path);
        } catch (...) {
            delete cascade;
            throw;
        }
        if (!loaded || cascade->classifier.empty()) {
            delete cascade;
            copy_message(message, message_capacity, "not a readable cascade classifier file");
            return FKCV_LOAD_FAILED;
        }
        *out = cascade;
        return FKCV_OK;
    });
}

extern "C" void fkcv_cascade_destroy(fkcv_cascade *cascade) { delete cascade; }

extern "C" fkcv_status fkcv_cascade_detect(fkcv_cascade *cascade, const uint8_t *gray, int32_t width,
                                           int32_t height, size_t bytes_per_row,
                                           const fkcv_detect_params *params, fkcv_rect *rects,
                                           int32_t capacity, int32_t *found, char *message,
                                           size_t message_capacity) {
    if (cascade == nullptr || gray == nullptr || params == nullptr || found == nullptr || width <= 0 ||
        height <= 0 || bytes_per_row < (size_t)width || capacity < 0 || (capacity > 0 && rects == nullptr)) {
        copy_message(message, message_capacity, "invalid argument");
        return FKCV_INVALID_ARGUMENT;
    }
    *found = 0;
    return guarded(message, message_capacity, [&]() -> fkcv_status {
        // The Mat wraps the caller's pixels: no copy.
        const cv::Mat image(height, width, CV_8UC1, const_cast<uint8_t *>(gray), bytes_per_row);
        cascade->scratch.clear();
        cascade->classifier.detectMultiScale(image, cascade->scratch, params->scale_factor, params->min_neighbors,
                                             0, cv::Size(params->min_width, params->min_height),
                                             cv::Size(params->max_width, params->max_height));
        const int32_t n = (int32_t)cascade->scratch.size();
        for (int32_t i = 0; i < n && i < capacity; ++i) {
            const cv::Rect &r = cascade->scratch[(size_t)i];
            rects[i] = fkcv_rect{r.x, r.y, r.width, r.height};
        }
        *found = n;
        return FKCV_OK;
    });
}

extern "C" int32_t fkcv_set_threads(int32_t threads) {
    try {
        const int previous = cv::getNumThreads();
        cv::setNumThreads(threads <= 0 ? -1 : threads);
        return previous;
    } catch (...) {
        return -1;
    }
}

extern "C" int32_t fkcv_get_threads(void) {
    try {
        return cv::getNumThreads();
    } catch (...) {
        return -1;
    }
}

extern "C" fkcv_status fkcv_match_template(const uint8_t *image, int32_t width, int32_t height, size_t bytes_per_row,
                                           const uint8_t *templ, int32_t template_width, int32_t template_height,
                                           size_t template_bytes_per_row, fkcv_match *result, char *message,
                                           size_t message_capacity) {
    if (image == nullptr || templ == nullptr || result == nullptr || template_width <= 0 || template_height <= 0 ||
        width < template_width || height < template_height || bytes_per_row < (size_t)width ||
        template_bytes_per_row < (size_t)template_width) {
        copy_message(message, message_capacity, "invalid argument");
        return FKCV_INVALID_ARGUMENT;
    }
    return guarded(message, message_capacity, [&]() -> fkcv_status {
        const cv::Mat search(height, width, CV_8UC1, const_cast<uint8_t *>(image), bytes_per_row);
        const cv::Mat patch(template_height, template_width, CV_8UC1, const_cast<uint8_t *>(templ),
                            template_bytes_per_row);
        thread_local cv::Mat scores;  // reused between calls on one thread
        cv::matchTemplate(search, patch, scores, cv::TM_CCOEFF_NORMED);
        double best = 0;
        cv::Point at;
        cv::minMaxLoc(scores, nullptr, &best, nullptr, &at);
        auto score = [&](int x, int y) -> float {
            x = std::min(std::max(x, 0), scores.cols - 1);
            y = std::min(std::max(y, 0), scores.rows - 1);
            const float v = scores.at<float>(y, x);
            return std::isfinite(v) ? v : -1.0f;
        };
        *result = fkcv_match{std::isfinite(best) ? (float)best : -1.0f, at.x, at.y,
                             score(at.x - 1, at.y), score(at.x + 1, at.y), score(at.x, at.y - 1), score(at.x, at.y + 1)};
        return FKCV_OK;
    });
}
