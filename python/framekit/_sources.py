"""Frame sources: files, folders of images, network streams, V4L2 cameras and the virtual
camera, as an iterator of NumPy frames with FrameKit's drop accounting."""
from __future__ import annotations

import ctypes
import os
import threading
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import numpy.typing as npt

from . import _capi
from ._errors import FrameKitError, check
from ._frames import OwnedFrame, format_code

_lib = _capi.lib

#: Why frames were dropped, in framekit.h's FK_DROP_* order, as FrameKit's stats name them.
DROP_REASONS: tuple[str, ...] = tuple(
    (_lib.fk_drop_reason_name(index) or b"").decode() for index in range(_capi.DROP_REASON_COUNT)
)


@dataclass(frozen=True)
class Frame:
    """One frame: ``image`` (a read-only array viewing FrameKit's buffer; ``.copy()`` it to
    keep or change it), its ``sequence_number`` (gaps are drops) and ``time`` in seconds."""

    image: npt.NDArray[np.uint8]
    sequence_number: int
    time: float


@dataclass(frozen=True)
class SourceCounts:
    """Frames captured, delivered and dropped so far; ``dropped`` by reason. Every captured
    frame is delivered, dropped or still pending: ``captured == delivered + pending + sum(dropped)``."""

    captured: int
    delivered: int
    pending: int
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def dropped_total(self) -> int:
        return sum(self.dropped.values())


class Source:
    """A running source; iterate it for frames (``framekit.open`` makes one). Close it, or use
    it in a ``with`` block, to stop reading. One thread reads at a time (a second one reading
    at once gets InvalidArgumentError); any thread may close it, which ends a waiting read."""

    def __init__(self, source: str | os.PathLike[str], realtime: bool = False, format: str = "rgb", reconnect: int = 5) -> None:
        options = _capi.SourceOptions()
        _lib.fk_source_options_init(ctypes.byref(options))
        options.realtime = 1 if realtime else 0
        options.format = format_code(format)
        options.reconnect_attempts = reconnect
        # Readers in fk_source_next, and whether close() has begun: close() stops the source, waits
        # for them to return, then frees it (fk_source_close must not run under a reader).
        self._state = threading.Condition()
        self._readers = 0
        self._closing = False
        self._handle = ctypes.c_void_p()
        error = _capi.Error()
        check(
            _lib.fk_source_open(os.fsencode(source), ctypes.byref(options), ctypes.byref(self._handle), ctypes.byref(error)),
            error,
        )

    def __iter__(self) -> Iterator[Frame]:
        return self

    def __next__(self) -> Frame:
        with self._state:
            if self._closing or not self._handle:
                raise StopIteration
            self._readers += 1
            source = self._handle
        handle = ctypes.c_void_p()
        error = _capi.Error()
        try:
            status = _lib.fk_source_next(source, ctypes.byref(handle), ctypes.byref(error))
        finally:
            with self._state:
                self._readers -= 1
                self._state.notify_all()
        if status == _capi.END:
            raise StopIteration
        check(status, error)
        owned = OwnedFrame(handle)
        return Frame(owned.array(), owned.info.sequence_number, owned.info.presentation_time)

    def read(self) -> Frame | None:
        """The next frame, or None at the end (``cv2.VideoCapture.read``'s shape)."""
        return next(self, None)

    @property
    def counts(self) -> SourceCounts:
        with self._state:
            if self._closing or not self._handle:
                raise FrameKitError("the source is closed")
            counts = _capi.SourceCounts()
            _lib.fk_source_get_counts(self._handle, ctypes.byref(counts))
        return SourceCounts(
            captured=counts.captured,
            delivered=counts.delivered,
            pending=counts.pending,
            dropped={reason: counts.dropped[index] for index, reason in enumerate(DROP_REASONS)},
        )

    def close(self) -> None:
        """Stops reading (frames already taken stay valid); a thread waiting for a frame gets
        the end. Any thread may close; closing twice does nothing."""
        with self._state:
            if self._closing or not self._handle:
                return
            self._closing = True
            handle = self._handle
        _lib.fk_source_stop(handle)
        with self._state:
            while self._readers:
                self._state.wait()
            self._handle = ctypes.c_void_p()
        _lib.fk_source_close(handle)

    def __enter__(self) -> "Source":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) and getattr(self, "_state", None) and _lib is not None:  # None: torn down
            self.close()


def open(source: str | os.PathLike[str], realtime: bool = False, format: str = "rgb", reconnect: int = 5) -> Source:
    """Opens ``source`` and starts reading it.

    ``source``: a video file (MP4, MKV, WebM, MOV, AVI; Y4M, MJPEG), an image or a folder of
    images, a stream URL (rtsp://, tcp://, udp://, http(s)://, srt://), a V4L2 node
    (/dev/video0), or "virtual" (the built-in virtual camera).

    ``realtime``: a file read at its frame rate, frames you are too slow for dropped as late
    (as a camera's are); otherwise every frame is delivered as fast as you take them. Cameras
    and live streams are always real time. ``format``: "rgb" (HxWx3), "bgra" (HxWx4) or "gray"
    (HxW). ``reconnect``: attempts when a live stream drops.
    """
    return Source(source, realtime=realtime, format=format, reconnect=reconnect)
