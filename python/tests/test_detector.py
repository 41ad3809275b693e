from __future__ import annotations

import ctypes
import sys
import threading
import time

import numpy as np
import pytest

import framekit
from framekit import _capi
from framekit._frames import WrappedFrame


def test_finds_the_astronaut(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    faces = detector.detect(astronaut)
    assert len(faces) == 1
    face = faces[0]
    # The face in scikit-image's astronaut.jpg (512x512) is at about (180, 60), 90x120.
    assert 160 < face.x < 200 and 40 < face.y < 80 and 70 < face.width < 110
    assert face.confidence > 0.5
    assert len(face.landmarks) == 5
    right_eye, left_eye, nose = face.landmarks[:3]
    assert right_eye[0] < left_eye[0] and nose[1] > right_eye[1]
    for x, y in face.landmarks:
        assert face.x <= x <= face.x + face.width and face.y <= y <= face.y + face.height


def test_structured_array_matches_faces(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    array = detector.detect_array(astronaut)
    assert array.dtype == framekit.FACE_DTYPE
    faces = detector.detect(astronaut)
    assert len(array) == len(faces)
    assert array[0]["x"] == faces[0].x and array[0]["landmarks"].shape == (5, 2)
    assert tuple(map(tuple, array[0]["landmarks"])) == faces[0].landmarks


def test_full_resolution_finds_a_small_face_in_a_large_photo(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    """A 2400x1800 picture with the astronaut shrunk four times (her face ~22x30 px): one pass,
    the picture shrunk to 640, misses her; the search at the picture's own scale finds her."""
    small = astronaut.reshape(128, 4, 128, 4, 3).mean(axis=(1, 3)).astype(np.uint8)
    photo = np.full((1800, 2400, 3), 120, np.uint8)
    photo[900:1028, 1500:1628] = small
    expected = (1500 + 180 // 4, 900 + 60 // 4)
    near = lambda f: abs(f.x - expected[0]) < 10 and abs(f.y - expected[1]) < 10
    assert not any(near(f) for f in detector.detect(photo))
    found = detector.detect(photo, full_resolution=True)
    assert len([f for f in found if near(f)]) == 1, found
    assert len(detector.detect_array(photo, full_resolution=True)) == len(found)


def test_no_faces_is_an_empty_result(detector: framekit.FaceDetector) -> None:
    blank = np.zeros((240, 320, 3), np.uint8)
    assert detector.detect(blank) == []
    assert detector.detect_array(blank).shape == (0,)


def test_an_image_goes_in_without_a_copy(astronaut: np.ndarray) -> None:
    """The pixels FrameKit reads are the array's own (checked by address)."""
    with WrappedFrame(astronaut) as frame:
        info = _capi.FrameInfo()
        assert _capi.lib.fk_frame_get_info(frame.handle, ctypes.byref(info)) == _capi.OK
        assert info.planes[0].data == astronaut.ctypes.data
    # A crop of whole rows and columns keeps its row stride: still no copy.
    crop = astronaut[100:400, 50:450]
    with WrappedFrame(crop) as frame:
        _capi.lib.fk_frame_get_info(frame.handle, ctypes.byref(info))
        assert info.planes[0].data == crop.ctypes.data
        assert info.planes[0].bytes_per_row == astronaut.strides[0]


def test_other_layouts_are_copied_and_give_the_same_faces(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    expected = detector.detect_array(astronaut)
    # A channel-reversed view (negative stride) is copied: BGR viewed as RGB twice is RGB.
    bgr = np.ascontiguousarray(astronaut[:, :, ::-1])
    again = bgr[:, :, ::-1]
    assert again.strides[2] == -1
    assert np.array_equal(detector.detect_array(again), expected)
    # Fortran order.
    assert np.array_equal(detector.detect_array(np.asfortranarray(astronaut)), expected)


def test_every_format_finds_the_face(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    gray = framekit.convert(astronaut, "gray")
    bgra = framekit.convert(astronaut, "bgra")
    assert gray.shape == astronaut.shape[:2] and bgra.shape == (*astronaut.shape[:2], 4)
    for image in (gray, bgra):
        faces = detector.detect(image)
        assert len(faces) == 1 and abs(faces[0].x - detector.detect(astronaut)[0].x) < 12


def test_threads_detect_at_once(astronaut: np.ndarray) -> None:
    detector = framekit.FaceDetector()
    expected = detector.detect_array(astronaut)
    shifted = np.roll(astronaut, 37, axis=1)
    expected_shifted = detector.detect_array(shifted)
    failures: list[str] = []

    def work(index: int) -> None:
        for _ in range(4):
            image, wanted = (astronaut, expected) if index % 2 == 0 else (shifted, expected_shifted)
            if not np.array_equal(detector.detect_array(image), wanted):
                failures.append(f"thread {index} differs")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_options_are_checked() -> None:
    with pytest.raises(framekit.InvalidArgumentError, match="inputSize"):
        framekit.FaceDetector(input_size=8)
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError
        framekit.FaceDetector(score_threshold=1.5)


def test_a_higher_threshold_and_size_limits_filter(astronaut: np.ndarray) -> None:
    assert framekit.FaceDetector(score_threshold=0.999).detect(astronaut) == []
    assert framekit.FaceDetector(max_face_size=40).detect(astronaut) == []
    assert len(framekit.FaceDetector(min_face_size=40).detect(astronaut)) == 1


def test_model_errors(tmp_path) -> None:
    with pytest.raises(framekit.ModelError, match="no readable file"):
        framekit.FaceDetector(model_path=tmp_path / "missing.onnx")
    forged = tmp_path / "forged.onnx"
    forged.write_bytes(b"\x08\x07" + bytes(range(256)) * 8)
    with pytest.raises(framekit.ModelError):
        framekit.FaceDetector(model_path=forged)


@pytest.mark.parametrize(
    "image, message",
    [
        (np.zeros((10, 10), np.float32), "dtype is uint8"),
        (np.zeros((10, 10, 5), np.uint8), "shape"),
        (np.zeros((0, 10, 3), np.uint8), "frame of"),
        ([[1, 2], [3, 4]], "numpy.ndarray"),
    ],
)
def test_bad_images_are_value_errors(detector: framekit.FaceDetector, image: object, message: str) -> None:
    with pytest.raises(framekit.InvalidArgumentError, match=message):
        detector.detect(image)  # type: ignore[arg-type]


def test_a_wrong_format_name(detector: framekit.FaceDetector, astronaut: np.ndarray) -> None:
    with pytest.raises(framekit.InvalidArgumentError, match="unknown format"):
        detector.detect(astronaut, format="bgr")
    with pytest.raises(framekit.InvalidArgumentError, match="HxWx4"):
        detector.detect(astronaut, format="bgra")


def test_the_gil_is_released_during_a_pass(astronaut: np.ndarray) -> None:
    """Another Python thread runs while one is inside a detector pass. With a switch interval of
    30 s the interpreter never takes the GIL from a thread: the main thread can run during the
    pass only if the call let go of it (otherwise it would count nothing before `finished`)."""
    detector = framekit.FaceDetector()
    entered = threading.Event()
    finished = False
    ticks = 0

    def work() -> None:
        nonlocal finished
        entered.set()
        detector.detect(astronaut)
        finished = True

    interval = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        entered.wait()
        while not finished:
            ticks += 1
            if ticks % 1000 == 0:
                time.sleep(0)  # lets the worker take the GIL back when its call returns
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert ticks > 0
