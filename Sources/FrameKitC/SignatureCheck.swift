import CFrameKitAPI

// Each @_cdecl function is public: the library exports only public symbols in a release build.
// The compiler checks each one against framekit.h's prototype: `sameType` takes
// two values of one type, so a parameter or result that differs from the header's is a build
// error here (the symbol names are checked by the C program in python/tests, which links them).
private func sameType<T>(_: T, _: T) {}

private func checkSignatures() {
    sameType(fk_detector_options_init, fkDetectorOptionsInit)
    sameType(fk_detector_new, fkDetectorNew)
    sameType(fk_detect, fkDetect)
    sameType(fk_detect_full_resolution, fkDetectFullResolution)
    sameType(fk_detector_free, fkDetectorFree)
    sameType(fk_faces_free, fkFacesFree)
    sameType(fk_frame_wrap, fkFrameWrap)
    sameType(fk_frame_new, fkFrameNew)
    sameType(fk_frame_get_info, fkFrameGetInfo)
    sameType(fk_frame_free, fkFrameFree)
    sameType(fk_api_version, fkApiVersion)
    sameType(fk_version, fkVersion)
    sameType(fk_drop_reason_name, fkDropReasonName)
    sameType(fk_convert, fkConvert)
    sameType(fk_resize, fkResize)
    sameType(fk_gaussian_blur, fkGaussianBlur)
    sameType(fk_sobel, fkSobel)
    sameType(fk_source_options_init, fkSourceOptionsInit)
    sameType(fk_source_open, fkSourceOpen)
    sameType(fk_source_next, fkSourceNext)
    sameType(fk_source_get_counts, fkSourceGetCounts)
    sameType(fk_source_stop, fkSourceStop)
    sameType(fk_source_close, fkSourceClose)
    sameType(fk_tracker_options_init, fkTrackerOptionsInit)
    sameType(fk_tracker_new, fkTrackerNew)
    sameType(fk_track, fkTrack)
    sameType(fk_tracker_get_stats, fkTrackerGetStats)
    sameType(fk_tracker_reset, fkTrackerReset)
    sameType(fk_tracker_free, fkTrackerFree)
}
