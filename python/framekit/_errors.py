"""FrameKit's errors as Python exceptions: one class per framekit.h status, FrameKit's message."""
from __future__ import annotations

from . import _capi


class FrameKitError(Exception):
    """Anything FrameKit reports; ``status`` is framekit.h's FK_ERR_* code."""

    status: int = _capi.ERR_INTERNAL

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(FrameKitError, ValueError):
    """A size, format or option FrameKit does not take (also a ValueError)."""

    status = _capi.ERR_INVALID_ARGUMENT


class ModelError(FrameKitError):
    """The model file is missing, corrupt, or uses an operator the detector does not run."""

    status = _capi.ERR_MODEL


class DetectionError(FrameKitError):
    """The network could not be set up or run."""

    status = _capi.ERR_DETECTION


class SourceError(FrameKitError, OSError):
    """A source could not be opened or read (also an OSError)."""

    status = _capi.ERR_SOURCE


_BY_STATUS: dict[int, type[FrameKitError]] = {
    _capi.ERR_INVALID_ARGUMENT: InvalidArgumentError,
    _capi.ERR_MODEL: ModelError,
    _capi.ERR_DETECTION: DetectionError,
    _capi.ERR_SOURCE: SourceError,
}


def check(status: int, error: _capi.Error) -> None:
    """Raises the exception for a failed call's status, with FrameKit's message."""
    if status == _capi.OK:
        return
    message = error.message.decode("utf-8", "replace") or f"FrameKit status {status}"
    kind = _BY_STATUS.get(status, FrameKitError)
    raise kind(message, status)

