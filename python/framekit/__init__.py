"""FrameKit for Python: the CNN face detector and tracker, frame sources and pixel kernels of
FrameKit (a Swift frame-processing SDK) on NumPy arrays. docs/python.md.

    import framekit
    detector = framekit.FaceDetector()
    with framekit.open("clip.mp4") as source:
        for frame in source:
            faces = detector.detect(frame.image)
"""
from __future__ import annotations

from . import _capi
from ._detection import FACE_DTYPE, Face, FaceDetector, FaceTracker
from ._errors import DetectionError, FrameKitError, InvalidArgumentError, ModelError, SourceError
from ._filters import convert, gaussian_blur, resize, sobel
from ._sources import DROP_REASONS, Frame, Source, SourceCounts, open

#: FrameKit's version (the library's: fk_version()).
__version__: str = _capi.lib.fk_version().decode()

__all__ = [
    "DROP_REASONS",
    "DetectionError",
    "FACE_DTYPE",
    "Face",
    "FaceDetector",
    "FaceTracker",
    "Frame",
    "FrameKitError",
    "InvalidArgumentError",
    "ModelError",
    "Source",
    "SourceCounts",
    "SourceError",
    "convert",
    "gaussian_blur",
    "open",
    "resize",
    "sobel",
]
