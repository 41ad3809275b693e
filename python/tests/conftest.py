"""The package under test is the installed one (scripts/test-python installs the wheel into a
fresh virtual environment); fixtures are the repository's test images."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import framekit

CHECKOUT = Path(__file__).resolve().parents[2]
FIXTURES = CHECKOUT / "Tests" / "FrameTestSupport" / "Fixtures"


def read_image(name: str, format: str = "rgb") -> np.ndarray:
    """A fixture image decoded by FrameKit (a one-image source), as a writable array."""
    with framekit.open(FIXTURES / name, format=format) as source:
        frames = list(source)
    assert len(frames) == 1
    return frames[0].image.copy()


@pytest.fixture(scope="session")
def astronaut() -> np.ndarray:
    return read_image("astronaut.jpg")


@pytest.fixture(scope="session")
def detector() -> framekit.FaceDetector:
    return framekit.FaceDetector()


def write_y4m(path: Path, frames: list[np.ndarray]) -> None:
    """Gray frames as a 4:2:0 Y4M file (neutral chroma)."""
    height, width = frames[0].shape
    with path.open("wb") as out:
        out.write(f"YUV4MPEG2 W{width} H{height} F30:1 Ip A1:1 C420jpeg\n".encode())
        chroma = np.full(((height + 1) // 2, (width + 1) // 2), 128, np.uint8).tobytes()
        for frame in frames:
            out.write(b"FRAME\n" + frame.tobytes() + chroma + chroma)
