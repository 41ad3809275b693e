"""The CNN face detector (CenterFace on XNNPACK) and the tracker, on NumPy images."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _capi
from ._errors import check
from ._frames import WrappedFrame

_lib = _capi.lib

#: One face as a row of a structured array (``FaceDetector.detect_array``): the box, the
#: confidence, and five landmarks as (x, y) pairs (right eye, left eye, nose tip, right and left
#: mouth corner, as seen by the subject).
FACE_DTYPE = np.dtype(
    [
        ("x", np.float64),
        ("y", np.float64),
        ("width", np.float64),
        ("height", np.float64),
        ("confidence", np.float64),
        ("landmarks", np.float64, (5, 2)),
    ]
)
_C_FACE_DTYPE = np.dtype(
    {
        "names": ["x", "y", "width", "height", "confidence", "landmarks", "landmark_count"],
        "formats": [np.float64, np.float64, np.float64, np.float64, np.float64, (np.float64, (5, 2)), np.int32],
        "offsets": [0, 8, 16, 24, 32, 40, 120],
        "itemsize": ctypes.sizeof(_capi.CFace),
    }
)


@dataclass(frozen=True)
class Face:
    """A face: its box in the image's pixels, the detector's confidence (0...1), and five
    landmarks as (x, y) (right eye, left eye, nose tip, right and left mouth corner)."""

    x: float
    y: float
    width: float
    height: float
    confidence: float
    landmarks: tuple[tuple[float, float], ...]

    @property
    def box(self) -> tuple[float, float, float, float]:
        """(x, y, width, height)."""
        return (self.x, self.y, self.width, self.height)


def _shipped_model() -> str | None:
    """The model the wheel carries (framekit/models/centerface.onnx), if this is an install."""
    path = Path(__file__).resolve().parent / "models" / "centerface.onnx"
    return str(path) if path.is_file() else None


def _faces_array(call: Any, *arguments: Any) -> npt.NDArray[Any]:
    faces = ctypes.POINTER(_capi.CFace)()
    count = ctypes.c_size_t()
    error = _capi.Error()
    check(call(*arguments, ctypes.byref(faces), ctypes.byref(count), ctypes.byref(error)), error)
    if count.value == 0:
        return np.zeros(0, dtype=FACE_DTYPE)
    try:
        raw = np.ctypeslib.as_array(ctypes.cast(faces, ctypes.POINTER(ctypes.c_uint8)), (count.value * _C_FACE_DTYPE.itemsize,))
        result = np.empty(count.value, dtype=FACE_DTYPE)
        view = raw.view(_C_FACE_DTYPE)
        for name in FACE_DTYPE.names or ():
            result[name] = view[name]
        return result
    finally:
        _lib.fk_faces_free(faces)


def _faces_list(array: npt.NDArray[Any]) -> list[Face]:
    return [
        Face(
            x=float(row["x"]),
            y=float(row["y"]),
            width=float(row["width"]),
            height=float(row["height"]),
            confidence=float(row["confidence"]),
            landmarks=tuple((float(p[0]), float(p[1])) for p in row["landmarks"]),
        )
        for row in array
    ]


class FaceDetector:
    """Finds faces in single images (``mp.solutions.face_detection.FaceDetection``'s place).

    Safe to call from several threads at once: each call borrows a network of its own, at most
    one per CPU the process may use, and the GIL is released while it runs.

    Args:
        input_size: the network's input, longest side, 32...4096; faces under ~12 px at that
            scale are missed (640 finds faces from ~24 px in a 1280x720 image).
        score_threshold: the lowest confidence reported, 0...1.
        overlap_threshold: boxes overlapping a stronger one by this IoU or more are dropped.
        min_face_size, max_face_size: limits on a face's longest side, in image pixels.
        model_path: another CenterFace-shaped ONNX file; default: the one shipped.
    """

    def __init__(
        self,
        input_size: int = 640,
        score_threshold: float = 0.3,
        overlap_threshold: float = 0.3,
        min_face_size: int | None = None,
        max_face_size: int | None = None,
        model_path: str | Path | None = None,
    ) -> None:
        options = _capi.DetectorOptions()
        _lib.fk_detector_options_init(ctypes.byref(options))
        options.input_size = input_size
        options.score_threshold = score_threshold
        options.overlap_threshold = overlap_threshold
        options.min_face_size = min_face_size or 0
        options.max_face_size = max_face_size or 0
        path = str(model_path) if model_path is not None else _shipped_model()
        self._handle = ctypes.c_void_p()
        error = _capi.Error()
        check(
            _lib.fk_detector_new(
                path.encode() if path is not None else None,
                ctypes.byref(options),
                ctypes.byref(self._handle),
                ctypes.byref(error),
            ),
            error,
        )

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and _lib is not None:  # None: the interpreter is tearing the module down
            _lib.fk_detector_free(handle)

    def detect_array(
        self, image: npt.NDArray[np.uint8], format: str | None = None, full_resolution: bool = False
    ) -> npt.NDArray[Any]:
        """The faces in ``image`` as a structured array of ``FACE_DTYPE``, strongest first.

        ``image``: uint8, HxWx3 RGB, HxWx4 BGRA or HxW gray (``format`` "rgb", "bgra", "gray"
        says which when the shape does not). Read in place, not copied, when its rows are
        packed. ``full_resolution``: a still picture searched at its own scale too (the whole
        image, then overlapping tiles of it: a few passes), so faces from ~20 px are found
        whatever its size; what ``framekit detect`` does for photos. Otherwise one pass, the
        image shrunk to the detector's input size."""
        with WrappedFrame(image, format) as frame:
            call = _lib.fk_detect_full_resolution if full_resolution else _lib.fk_detect
            return _faces_array(call, self._handle, frame.handle)

    def detect(self, image: npt.NDArray[np.uint8], format: str | None = None, full_resolution: bool = False) -> list[Face]:
        """The faces in ``image`` as ``Face`` values, strongest first (see ``detect_array``)."""
        return _faces_list(self.detect_array(image, format, full_resolution))


class FaceTracker:
    """Faces through a video: a detector pass every ``pass_interval`` frames (and on a frame
    where a face was lost), faces followed between passes; passes grow up to
    ``quiet_interval`` frames apart while nothing changes. Give it the frames in order; one
    thread at a time. Each frame is copied (the tracker keeps recent frames).

    Args:
        detector: the detector its passes run (default: a ``FaceDetector()``).
    """

    def __init__(self, detector: FaceDetector | None = None, pass_interval: int = 4, quiet_interval: int = 12) -> None:
        self.detector = detector or FaceDetector()
        options = _capi.TrackerOptions()
        _lib.fk_tracker_options_init(ctypes.byref(options))
        options.pass_interval = pass_interval
        options.quiet_interval = quiet_interval
        self._handle = ctypes.c_void_p()
        error = _capi.Error()
        check(
            _lib.fk_tracker_new(self.detector._handle, ctypes.byref(options), ctypes.byref(self._handle), ctypes.byref(error)),
            error,
        )

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and _lib is not None:
            _lib.fk_tracker_free(handle)

    def track_array(self, image: npt.NDArray[np.uint8], format: str | None = None) -> npt.NDArray[Any]:
        """The faces in the video's next frame, as ``FaceDetector.detect_array`` gives them."""
        with WrappedFrame(image, format) as frame:
            return _faces_array(_lib.fk_track, self._handle, frame.handle)

    def track(self, image: npt.NDArray[np.uint8], format: str | None = None) -> list[Face]:
        """The faces in the video's next frame as ``Face`` values."""
        return _faces_list(self.track_array(image, format))

    def reset(self) -> None:
        """Forgets every face (a cut to another scene, another video)."""
        _lib.fk_tracker_reset(self._handle)

    @property
    def stats(self) -> dict[str, int]:
        """Frames tracked and detector passes run so far."""
        stats = _capi.TrackerStats()
        _lib.fk_tracker_get_stats(self._handle, ctypes.byref(stats))
        return {"frames": stats.frames, "passes": stats.passes}
