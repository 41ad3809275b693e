"""NumPy arrays as FrameKit frames (no copy) and FrameKit frames as NumPy arrays (no copy)."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _capi
from ._errors import InvalidArgumentError, check

_lib = _capi.lib

#: FrameKit's one-plane formats by name, with their channels a pixel.
FORMATS: dict[str, tuple[int, int]] = {
    "rgb": (_capi.FORMAT_RGB24, 3),
    "bgra": (_capi.FORMAT_BGRA32, 4),
    "gray": (_capi.FORMAT_GRAY8, 1),
}


def format_code(name: str) -> int:
    try:
        return FORMATS[name][0]
    except KeyError:
        raise InvalidArgumentError(f"unknown format {name!r}: one of {', '.join(FORMATS)}") from None


def _guess_format(image: npt.NDArray[Any]) -> str:
    if image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 1):
        return "gray"
    if image.ndim == 3 and image.shape[2] == 3:
        return "rgb"
    if image.ndim == 3 and image.shape[2] == 4:
        return "bgra"
    raise InvalidArgumentError(f"an image is HxWx3 (RGB), HxWx4 (BGRA) or HxW (gray) uint8; got shape {image.shape}")


class WrappedFrame:
    """A NumPy array lent to FrameKit as an fk_frame, for the length of a ``with`` block.

    No copy is made when the rows' pixels are packed (any row stride is fine): FrameKit reads
    the array's own memory. Other layouts (a column slice, a transposed array) are copied
    first. The array must not change while the block runs (FrameKit never writes it).
    """

    def __init__(self, image: npt.NDArray[Any], format: str | None = None) -> None:
        if not isinstance(image, np.ndarray):
            raise InvalidArgumentError(f"an image is a numpy.ndarray, not {type(image).__name__}")
        if image.dtype != np.uint8:
            raise InvalidArgumentError(f"an image's dtype is uint8, not {image.dtype}")
        name = format or _guess_format(image)
        code, channels = FORMATS.get(name, (None, 0))
        if code is None:
            raise InvalidArgumentError(f"unknown format {name!r}: one of {', '.join(FORMATS)}")
        shape = image.shape if image.ndim == 3 else (*image.shape, 1)
        if image.ndim not in (2, 3) or shape[2] != channels:
            raise InvalidArgumentError(f"a {name} image is HxWx{channels} uint8; got shape {image.shape}")
        if image.ndim == 3:
            packed = image.strides[1] == channels and image.strides[2] == 1
        else:
            packed = image.strides[1] == 1
        if not packed or image.strides[0] < image.shape[1] * channels:
            image = np.ascontiguousarray(image)
        self.image = image  # keeps the memory alive while FrameKit may read it
        self.handle = ctypes.c_void_p()
        # A whole frame FrameKit made (a source's): its own handle, not a wrapping of it, so
        # that what keeps frames (a tracker) need not copy it.
        owner: object = image.base
        self.borrowed = False
        if isinstance(owner, OwnedFrame) and owner.views_whole(image) and owner.info.format == code:
            self.borrowed = True
            self.handle = owner.handle
            return
        error = _capi.Error()
        check(
            _lib.fk_frame_wrap(
                ctypes.c_void_p(image.ctypes.data),
                image.shape[1],
                image.shape[0],
                image.strides[0],
                code,
                ctypes.byref(self.handle),
                ctypes.byref(error),
            ),
            error,
        )

    def __enter__(self) -> "WrappedFrame":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.borrowed:
            _lib.fk_frame_free(self.handle)
        self.handle = ctypes.c_void_p()


class OwnedFrame:
    """An fk_frame FrameKit made (a source's frame, a conversion's result); freed with the last
    array that views it."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self.handle = handle
        self.info = _capi.FrameInfo()
        _lib.fk_frame_get_info(handle, ctypes.byref(self.info))

    def __del__(self) -> None:
        if self.handle and _lib is not None:  # None: the interpreter is tearing the module down
            _lib.fk_frame_free(self.handle)
            self.handle = ctypes.c_void_p()

    @property
    def __array_interface__(self) -> dict[str, Any]:
        info = self.info
        plane = info.planes[0]
        channels = plane.bytes_per_pixel
        shape: tuple[int, ...] = (plane.height, plane.width) if channels == 1 else (plane.height, plane.width, channels)
        strides: tuple[int, ...] = (plane.bytes_per_row, 1) if channels == 1 else (plane.bytes_per_row, channels, 1)
        # Read-only: FrameKit's frames may share memory (copy on write in Swift).
        return {"version": 3, "shape": shape, "typestr": "|u1", "data": (plane.data, True), "strides": strides}

    def views_whole(self, image: npt.NDArray[Any]) -> bool:
        """Whether ``image`` is this frame's whole array, not a crop of it."""
        interface = self.__array_interface__
        return bool(
            image.ctypes.data == interface["data"][0] and image.shape == interface["shape"] and image.strides == interface["strides"]
        )

    def array(self) -> npt.NDArray[np.uint8]:
        """A read-only view of the frame's pixels that keeps the frame alive."""
        if self.info.plane_count != 1:
            raise InvalidArgumentError("only one-plane frames (rgb, bgra, gray) become arrays")
        return np.asarray(self)


def frame_result(call: Any, *arguments: Any) -> npt.NDArray[np.uint8]:
    """Calls an fk_* function that gives out a new frame, and returns it as an array."""
    handle = ctypes.c_void_p()
    error = _capi.Error()
    check(call(*arguments, ctypes.byref(handle), ctypes.byref(error)), error)
    return OwnedFrame(handle).array()
