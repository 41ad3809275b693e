from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import framekit

from conftest import FIXTURES, write_y4m


def ramp_frames(count: int, width: int = 64, height: int = 48) -> list[np.ndarray]:
    return [np.full((height, width), 10 + 3 * index, np.uint8) for index in range(count)]


def test_a_file_gives_every_frame_in_order(tmp_path: Path) -> None:
    clip = tmp_path / "ramp.y4m"
    write_y4m(clip, ramp_frames(40))
    with framekit.open(clip, format="gray") as source:
        frames = list(source)
        counts = source.counts
    assert [frame.sequence_number for frame in frames] == list(range(40))
    assert [int(frame.image[0, 0]) for frame in frames] == [10 + 3 * index for index in range(40)]
    assert frames[1].time == pytest.approx(1 / 30)
    assert counts.captured == 40 and counts.delivered == 40 and counts.dropped_total == 0 and counts.pending == 0


def test_frames_kept_stay_valid_and_read_only(tmp_path: Path) -> None:
    clip = tmp_path / "ramp.y4m"
    write_y4m(clip, ramp_frames(12))
    source = framekit.open(clip, format="rgb")
    frames = list(source)
    source.close()
    # Y4M is video range: RGB = (Y - 16) * 255 / 219, clamped.
    expected = [max(0, round((10 + 3 * index - 16) * 255 / 219)) for index in range(12)]
    assert all(abs(int(frame.image[5, 5, 0]) - value) <= 1 for frame, value in zip(frames, expected))
    assert len(frames) == 12
    assert frames[0].image.shape == (48, 64, 3)
    with pytest.raises(ValueError):
        frames[0].image[0, 0, 0] = 1
    writable = frames[0].image.copy()
    writable[0, 0, 0] = 1


def test_a_folder_of_photos_is_frames_of_their_own_sizes(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "astronaut.jpg", tmp_path / "a.jpg")
    shutil.copy(FIXTURES / "coffee.jpg", tmp_path / "b.jpg")
    with framekit.open(tmp_path) as source:
        shapes = [frame.image.shape for frame in source]
    assert shapes[0] == (512, 512, 3) and len(shapes) == 2 and shapes[1] != shapes[0]


def test_a_slow_reader_of_a_real_time_source_sees_late_drops() -> None:
    """The virtual camera runs at 30 fps whatever the reader does: while the reader holds off
    (until the camera has captured ten more frames), the frames it could not take are dropped
    as late and counted, and every frame is accounted for."""
    import time

    with framekit.open("virtual") as source:
        first = next(source)
        while source.counts.captured < first.sequence_number + 12:
            time.sleep(0.005)  # polls a count; the camera's pace does the work
        second = next(source)
        counts = source.counts
    gap = second.sequence_number - first.sequence_number - 1
    assert gap >= 9
    assert counts.dropped["frame_was_late"] >= gap
    assert counts.captured == counts.delivered + counts.pending + counts.dropped_total


def test_realtime_option_paces_a_file(tmp_path: Path) -> None:
    clip = tmp_path / "ramp.y4m"
    write_y4m(clip, ramp_frames(6))
    with framekit.open(clip, realtime=True, format="gray") as source:
        frames = list(source)
        counts = source.counts
    # Paced like a camera: whatever was too late is dropped, and all six are accounted for.
    assert counts.captured == 6 and len(frames) == counts.delivered == 6 - counts.dropped_total
    assert [frame.time for frame in frames] == sorted(frame.time for frame in frames)


def test_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(framekit.SourceError) as missing:
        framekit.open(tmp_path / "missing.mp4")
    assert isinstance(missing.value, OSError) and "missing.mp4" in str(missing.value)
    garbage = tmp_path / "garbage.mp4"
    garbage.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(framekit.SourceError):
        framekit.open(garbage)
    with pytest.raises(framekit.InvalidArgumentError, match="unknown format"):
        framekit.open("virtual", format="yuv")
    with pytest.raises(framekit.FrameKitError):
        framekit.open("gopher://example.invalid/x")
    with pytest.raises(framekit.InvalidArgumentError, match="empty"):
        framekit.open("")


def test_a_truncated_file_loses_only_the_damaged_frame(tmp_path: Path) -> None:
    clip = tmp_path / "cut.y4m"
    write_y4m(clip, ramp_frames(10))
    data = clip.read_bytes()
    clip.write_bytes(data[: len(data) - 500])
    with framekit.open(clip, format="gray") as source:
        frames = list(source)
        counts = source.counts
    assert len(frames) == 9
    assert counts.captured == counts.delivered + counts.dropped_total


def test_close_ends_iteration_and_is_idempotent(tmp_path: Path) -> None:
    clip = tmp_path / "ramp.y4m"
    write_y4m(clip, ramp_frames(30))
    source = framekit.open(clip)
    assert source.read() is not None
    source.close()
    source.close()
    assert source.read() is None
    with pytest.raises(framekit.FrameKitError, match="closed"):
        _ = source.counts


def test_closing_while_a_frame_waits_does_not_hang() -> None:
    """Closing a real-time source whose next frame is waiting for the reader ends at once."""
    for _ in range(3):
        source = framekit.open("virtual")
        source.read()
        source.close()


def test_a_live_stream_over_tcp() -> None:
    """An MJPEG stream served on loopback: frames arrive as a live source's (paced, counted),
    and when the sender hangs up with no reconnection allowed the source ends with a
    SourceError, never a hang."""
    import socket
    import threading

    photo = (FIXTURES / "astronaut.jpg").read_bytes()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            for _ in range(40):
                connection.sendall(photo)

    sender = threading.Thread(target=serve)
    sender.start()
    frames = []
    with framekit.open(f"tcp://127.0.0.1:{port}", reconnect=0) as source:
        with pytest.raises(framekit.SourceError):
            for frame in source:
                frames.append(frame.sequence_number)
        counts = source.counts
    sender.join()
    server.close()
    assert frames and counts.delivered == len(frames)
    assert counts.captured == counts.delivered + counts.pending + counts.dropped_total


def test_frames_of_photos_and_mjpeg_may_all_be_kept(tmp_path: Path) -> None:
    """A folder of photos and an MJPEG file decode into the source's few pool buffers; frames
    handed out are FrameKit's own copies, so keeping every one starves nothing."""
    photos = tmp_path / "photos"
    photos.mkdir()
    for index in range(8):
        shutil.copy(FIXTURES / ("astronaut.jpg" if index % 2 == 0 else "coffee.jpg"), photos / f"{index:02}.jpg")
    clip = tmp_path / "clip.mjpeg"
    clip.write_bytes((FIXTURES / "astronaut.jpg").read_bytes() * 12)
    for path, count in ((photos, 8), (clip, 12)):
        with framekit.open(path) as source:
            frames = list(source)
            counts = source.counts
        assert len(frames) == count and counts.dropped_total == 0, (path, counts)
        assert len({frame.image.ctypes.data for frame in frames}) == count


def test_a_second_reader_at_once_is_refused_and_close_ends_a_waiting_read() -> None:
    """One thread reads at a time: a second one reading at once gets InvalidArgumentError, never
    a hang; close() from another thread ends a read that waits for a frame."""
    import threading

    source = framekit.open("virtual")
    source.read()
    outcomes: list[str] = []
    started = threading.Barrier(3)

    def read() -> None:
        started.wait()
        try:
            while source.read() is not None:
                pass
            outcomes.append("end")
        except framekit.InvalidArgumentError as error:
            outcomes.append("refused: " + str(error))

    readers = [threading.Thread(target=read) for _ in range(2)]
    for reader in readers:
        reader.start()
    started.wait()
    # Both readers are reading (or one has been refused); close ends the other's loop.
    while len(outcomes) < 1:
        threading.Event().wait(0.01)
    source.close()
    for reader in readers:
        reader.join()
    assert sorted(outcome.split(":")[0] for outcome in outcomes) == ["end", "refused"], outcomes
    assert "another thread" in [o for o in outcomes if o.startswith("refused")][0]
