/* Calls every function of framekit.h from C, compiled with -Wall -Wextra -Werror against the
   header the package ships and linked with its libFrameKitC.so (test_capi.py): the names and
   argument types a C caller sees are the library's. Prints what it checked; exits non-zero on
   the first thing that is not as framekit.h says. */
#include <framekit.h>
#include <stdio.h>
#include <string.h>

#define EXPECT(condition)                                                   \
    do {                                                                    \
        if (!(condition)) {                                                 \
            fprintf(stderr, "capi_check: line %d: %s\n", __LINE__, #condition); \
            return 1;                                                       \
        }                                                                   \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: capi_check MODEL.onnx IMAGE.jpg\n");
        return 2;
    }
    EXPECT(fk_api_version() == FK_API_VERSION);
    EXPECT(strlen(fk_version()) > 0);
    EXPECT(strcmp(fk_drop_reason_name(FK_DROP_FRAME_WAS_LATE), "frame_was_late") == 0);
    EXPECT(fk_drop_reason_name(FK_DROP_REASON_COUNT) == NULL);

    fk_error error;
    fk_frame *frame = NULL;
    /* Misuse is a status, never a crash. */
    EXPECT(fk_frame_new(0, 10, FK_FORMAT_RGB24, &frame, &error) == FK_ERR_INVALID_ARGUMENT && frame == NULL);
    EXPECT(strlen(error.message) > 0);
    EXPECT(fk_frame_get_info(NULL, NULL) == FK_ERR_INVALID_ARGUMENT);
    EXPECT(fk_detect(NULL, NULL, NULL, NULL, &error) == FK_ERR_INVALID_ARGUMENT);
    EXPECT(fk_detect_full_resolution(NULL, NULL, NULL, NULL, &error) == FK_ERR_INVALID_ARGUMENT);

    uint8_t pixels[4 * 6 * 3];
    memset(pixels, 200, sizeof pixels);
    EXPECT(fk_frame_wrap(pixels, 6, 4, 6 * 3, FK_FORMAT_RGB24, &frame, &error) == FK_OK);
    fk_frame_info info;
    EXPECT(fk_frame_get_info(frame, &info) == FK_OK);
    EXPECT(info.planes[0].data == pixels && info.width == 6 && info.height == 4 && info.plane_count == 1);
    fk_frame *gray = NULL, *small = NULL, *blurred = NULL, *edges = NULL, *nv12 = NULL;
    EXPECT(fk_convert(frame, FK_FORMAT_GRAY8, &gray, &error) == FK_OK);
    EXPECT(fk_convert(frame, FK_FORMAT_NV12, &nv12, &error) == FK_OK);
    EXPECT(fk_frame_get_info(nv12, &info) == FK_OK && info.plane_count == 2 && info.format == FK_FORMAT_NV12);
    EXPECT(fk_resize(frame, 3, 2, &small, &error) == FK_OK);
    EXPECT(fk_gaussian_blur(gray, 3, &blurred, &error) == FK_OK);
    EXPECT(fk_gaussian_blur(gray, 7, &edges, &error) == FK_ERR_INVALID_ARGUMENT && edges == NULL);
    EXPECT(fk_sobel(gray, &edges, &error) == FK_OK);
    EXPECT(fk_frame_get_info(edges, &info) == FK_OK && info.planes[0].data[0] == 0);
    fk_frame_free(gray);
    fk_frame_free(nv12);
    fk_frame_free(small);
    fk_frame_free(blurred);
    fk_frame_free(edges);
    fk_frame_free(frame);
    fk_frame_free(NULL);

    fk_detector_options detector_options;
    fk_detector_options_init(&detector_options);
    EXPECT(detector_options.input_size == 640);
    fk_detector *detector = NULL;
    EXPECT(fk_detector_new("/nonexistent.onnx", NULL, &detector, &error) == FK_ERR_MODEL && detector == NULL);
    EXPECT(fk_detector_new(argv[1], &detector_options, &detector, &error) == FK_OK);

    fk_source_options source_options;
    fk_source_options_init(&source_options);
    fk_source *source = NULL;
    EXPECT(fk_source_open("/nonexistent.mp4", &source_options, &source, &error) == FK_ERR_SOURCE && source == NULL);
    EXPECT(fk_source_open(argv[2], &source_options, &source, &error) == FK_OK);
    EXPECT(fk_source_next(source, &frame, &error) == FK_OK);
    fk_face *faces = NULL;
    size_t count = 0;
    EXPECT(fk_detect(detector, frame, &faces, &count, &error) == FK_OK);
    EXPECT(count >= 1 && faces[0].landmark_count == 5 && faces[0].confidence > 0.5);
    printf("faces %zu first %.0f %.0f %.0f %.0f\n", count, faces[0].x, faces[0].y, faces[0].width, faces[0].height);
    fk_faces_free(faces);

    fk_tracker_options tracker_options;
    fk_tracker_options_init(&tracker_options);
    fk_tracker *tracker = NULL;
    EXPECT(fk_tracker_new(detector, &tracker_options, &tracker, &error) == FK_OK);
    fk_detector_free(detector); /* the tracker keeps its own reference */
    for (int i = 0; i < 3; i++) {
        EXPECT(fk_track(tracker, frame, &faces, &count, &error) == FK_OK && count >= 1);
        fk_faces_free(faces);
    }
    fk_tracker_stats stats;
    EXPECT(fk_tracker_get_stats(tracker, &stats) == FK_OK && stats.frames == 3 && stats.passes >= 1);
    fk_tracker_reset(tracker);
    fk_tracker_free(tracker);
    fk_frame_free(frame);

    EXPECT(fk_source_next(source, &frame, &error) == FK_END && frame == NULL);
    fk_source_counts counts;
    EXPECT(fk_source_get_counts(source, &counts) == FK_OK && counts.captured == 1 && counts.delivered == 1);
    fk_source_stop(source);
    EXPECT(fk_source_next(source, &frame, &error) == FK_END);
    fk_source_close(source);
    fk_source_stop(NULL);
    fk_source_close(NULL);
    printf("capi_check: ok\n");
    return 0;
}
