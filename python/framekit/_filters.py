"""FrameKit's pixel kernels on NumPy images: colour conversion, resize, filters. Each returns a
new read-only array (``.copy()`` it to change it)."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

from . import _capi
from ._frames import WrappedFrame, format_code, frame_result

_lib = _capi.lib


def convert(image: npt.NDArray[np.uint8], to: str, format: str | None = None) -> npt.NDArray[np.uint8]:
    """``image`` in another format: "rgb", "bgra" or "gray" (BT.601 luma)."""
    code = format_code(to)
    with WrappedFrame(image, format) as frame:
        return frame_result(_lib.fk_convert, frame.handle, code)


def resize(image: npt.NDArray[np.uint8], width: int, height: int, format: str | None = None) -> npt.NDArray[np.uint8]:
    """Bilinear resize (OpenCV's INTER_LINEAR arithmetic) to ``width`` x ``height``."""
    with WrappedFrame(image, format) as frame:
        return frame_result(_lib.fk_resize, frame.handle, width, height)


def gaussian_blur(gray: npt.NDArray[np.uint8], kernel_size: int = 3) -> npt.NDArray[np.uint8]:
    """A gray image blurred with OpenCV's fixed 3x3 or 5x5 Gaussian kernel (sigma 0)."""
    with WrappedFrame(gray, "gray") as frame:
        return frame_result(_lib.fk_gaussian_blur, frame.handle, kernel_size)


def sobel(gray: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """|d/dx| + |d/dy| of the 3x3 Sobel operator on a gray image, saturated to 8 bits."""
    with WrappedFrame(gray, "gray") as frame:
        return frame_result(_lib.fk_sobel, frame.handle)
