from __future__ import annotations

import numpy as np
import pytest

import framekit


def panned(image: np.ndarray, frames: int, step: int) -> list[np.ndarray]:
    """The image under a camera panning `step` pixels a frame, on a larger gray canvas."""
    height, width = image.shape[:2]
    clip = []
    for index in range(frames):
        canvas = np.full((height + 40, width + frames * step + 40, 3), 90, np.uint8)
        x = 20 + index * step
        canvas[20:20 + height, x:x + width] = image
        clip.append(canvas)
    return clip


def test_follows_a_face_through_a_pan(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    tracker = framekit.FaceTracker(detector, pass_interval=4)
    clip = panned(astronaut, 24, 6)
    xs = []
    for frame in clip:
        faces = tracker.track(frame)
        assert len(faces) == 1
        xs.append(faces[0].x)
    # The box moves with the face: ~6 px a frame.
    steps = np.diff(xs)
    assert abs(float(np.median(steps)) - 6) <= 2, steps
    stats = tracker.stats
    assert stats["frames"] == 24
    # Passes on a fraction of the frames; patch tracking between them.
    assert 1 <= stats["passes"] < 24


def test_reset_forgets(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    tracker = framekit.FaceTracker(detector)
    assert len(tracker.track(astronaut)) == 1
    tracker.reset()
    blank = np.zeros_like(astronaut)
    assert tracker.track(blank) == []


def test_the_tracker_copies_frames_it_keeps(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    """Overwriting an array after track() returns changes nothing the tracker already has."""
    tracker = framekit.FaceTracker(detector, pass_interval=8)
    reference = framekit.FaceTracker(detector, pass_interval=8)
    frame = astronaut.copy()
    for _ in range(6):
        got = tracker.track_array(frame)
        frame[:] = 0  # the caller reuses its buffer
        frame[:] = astronaut
        assert np.array_equal(got, reference.track_array(astronaut))


def test_tracker_options_are_checked(detector: framekit.FaceDetector) -> None:
    with pytest.raises(framekit.InvalidArgumentError, match="pass_interval"):
        framekit.FaceTracker(detector, pass_interval=0)


def test_a_sources_frames_go_to_the_tracker_without_a_copy(tmp_path) -> None:
    """A frame from framekit.open is handed over as FrameKit's own frame (its handle), so the
    tracker keeps it without copying; a crop of it is lent like any array."""
    from framekit._frames import WrappedFrame

    from conftest import write_y4m

    clip = tmp_path / "clip.y4m"
    write_y4m(clip, [np.full((48, 64), 100, np.uint8)] * 3)
    with framekit.open(clip) as source:
        frame = next(source)
        with WrappedFrame(frame.image) as lent:
            assert lent.borrowed and lent.handle.value == frame.image.base.handle.value
        with WrappedFrame(frame.image[4:20]) as crop:
            assert not crop.borrowed
        assert frame.image[0, 0, 0] == frame.image[0, 0, 0]  # still valid after both blocks
        tracker = framekit.FaceTracker()
        for frame in [frame, *source]:
            tracker.track(frame.image)
        assert tracker.stats["frames"] == 3
