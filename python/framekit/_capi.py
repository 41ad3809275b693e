"""framekit.h through ctypes: the library, its structures and its functions' signatures.

ctypes releases the GIL for the length of every call into the library, so a detector pass
never holds up other Python threads.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

API_VERSION = 1

OK, END, ERR_INVALID_ARGUMENT, ERR_MODEL, ERR_DETECTION, ERR_SOURCE, ERR_INTERNAL = range(7)
FORMAT_RGB24, FORMAT_BGRA32, FORMAT_GRAY8, FORMAT_NV12, FORMAT_I420, FORMAT_YUYV = range(6)
DROP_REASON_COUNT = 6


class Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int32), ("message", ctypes.c_char * 512)]


class Plane(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("bytes_per_row", ctypes.c_int64),
        ("width", ctypes.c_int32),
        ("height", ctypes.c_int32),
        ("bytes_per_pixel", ctypes.c_int32),
    ]


class FrameInfo(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int32),
        ("height", ctypes.c_int32),
        ("format", ctypes.c_int32),
        ("plane_count", ctypes.c_int32),
        ("planes", Plane * 3),
        ("sequence_number", ctypes.c_uint64),
        ("presentation_time", ctypes.c_double),
    ]


class CFace(ctypes.Structure):
    _fields_ = [
        ("x", ctypes.c_double),
        ("y", ctypes.c_double),
        ("width", ctypes.c_double),
        ("height", ctypes.c_double),
        ("confidence", ctypes.c_double),
        ("landmarks", ctypes.c_double * 10),
        ("landmark_count", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


class DetectorOptions(ctypes.Structure):
    _fields_ = [
        ("input_size", ctypes.c_int32),
        ("score_threshold", ctypes.c_double),
        ("overlap_threshold", ctypes.c_double),
        ("min_face_size", ctypes.c_int32),
        ("max_face_size", ctypes.c_int32),
    ]


class TrackerOptions(ctypes.Structure):
    _fields_ = [("pass_interval", ctypes.c_int32), ("quiet_interval", ctypes.c_int32)]


class TrackerStats(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("passes", ctypes.c_int64)]


class SourceOptions(ctypes.Structure):
    _fields_ = [("realtime", ctypes.c_int32), ("format", ctypes.c_int32), ("reconnect_attempts", ctypes.c_int32)]


class SourceCounts(ctypes.Structure):
    _fields_ = [
        ("captured", ctypes.c_int64),
        ("delivered", ctypes.c_int64),
        ("pending", ctypes.c_int64),
        ("dropped", ctypes.c_int64 * DROP_REASON_COUNT),
    ]


def _library_path() -> str:
    """The wheel's own copy, beside this file; FRAMEKIT_LIBRARY names another."""
    override = os.environ.get("FRAMEKIT_LIBRARY")
    if override:
        return override
    return str(Path(__file__).resolve().parent / "_lib" / "libFrameKitC.so")


def _load() -> ctypes.CDLL:
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as error:
        raise ImportError(
            f"framekit: cannot load {path}: {error}. Its runtime libraries come from Debian 12's packages "
            "(docs/python.md lists them: libopencv-core406, libxnnpack0, libavformat59 ...)."
        ) from None
    _declare(lib)
    built = lib.fk_api_version()
    if built != API_VERSION:
        raise ImportError(f"framekit: {path} implements C API version {built}; this package needs {API_VERSION}")
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    P = ctypes.POINTER
    handle = ctypes.c_void_p
    out = P(ctypes.c_void_p)
    err = P(Error)
    status = ctypes.c_int32
    faces_out = P(P(CFace))
    size_out = P(ctypes.c_size_t)
    signatures = {
        "fk_api_version": (ctypes.c_int32, []),
        "fk_version": (ctypes.c_char_p, []),
        "fk_drop_reason_name": (ctypes.c_char_p, [ctypes.c_int32]),
        "fk_frame_wrap": (
            status,
            [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int32, out, err],
        ),
        "fk_frame_new": (status, [ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, out, err]),
        "fk_frame_get_info": (status, [handle, P(FrameInfo)]),
        "fk_frame_free": (None, [handle]),
        "fk_convert": (status, [handle, ctypes.c_int32, out, err]),
        "fk_resize": (status, [handle, ctypes.c_int32, ctypes.c_int32, out, err]),
        "fk_gaussian_blur": (status, [handle, ctypes.c_int32, out, err]),
        "fk_sobel": (status, [handle, out, err]),
        "fk_faces_free": (None, [P(CFace)]),
        "fk_detector_options_init": (None, [P(DetectorOptions)]),
        "fk_detector_new": (status, [ctypes.c_char_p, P(DetectorOptions), out, err]),
        "fk_detect": (status, [handle, handle, faces_out, size_out, err]),
        "fk_detect_full_resolution": (status, [handle, handle, faces_out, size_out, err]),
        "fk_detector_free": (None, [handle]),
        "fk_tracker_options_init": (None, [P(TrackerOptions)]),
        "fk_tracker_new": (status, [handle, P(TrackerOptions), out, err]),
        "fk_track": (status, [handle, handle, faces_out, size_out, err]),
        "fk_tracker_get_stats": (status, [handle, P(TrackerStats)]),
        "fk_tracker_reset": (None, [handle]),
        "fk_tracker_free": (None, [handle]),
        "fk_source_options_init": (None, [P(SourceOptions)]),
        "fk_source_open": (status, [ctypes.c_char_p, P(SourceOptions), out, err]),
        "fk_source_next": (status, [handle, out, err]),
        "fk_source_get_counts": (status, [handle, P(SourceCounts)]),
        "fk_source_stop": (None, [handle]),
        "fk_source_close": (None, [handle]),
    }
    for name, (result, arguments) in signatures.items():
        function = getattr(lib, name)
        function.restype = result
        function.argtypes = arguments


lib = _load()
