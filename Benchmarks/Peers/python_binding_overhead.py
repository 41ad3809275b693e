"""What the Python binding adds to a call: `FaceDetector.detect` on a 64x64 image against
`fk_detect` called straight through ctypes on a frame wrapped once (the library's own work plus
ctypes' call), the same detector, image and process, alternated in rounds; the difference is the
package's share (wrapping the array, the faces turned into values, errors checked). The same on
an 8x8 image, too small for a network pass: there `detect()`'s whole time is the binding's (the
array wrapped, FrameKit called, the empty result returned). Also the zero-copy check on a
1280x720 frame: its wrapped pixels' address is the array's.

Usage: python python_binding_overhead.py (with framekit installed: pip install ./python)
"""
import ctypes
import time

import numpy as np

import framekit
from framekit import _capi
from framekit._frames import WrappedFrame


def per_call(function, calls):
    began = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - began) / calls


def main():
    detector = framekit.FaceDetector()
    for side in (64, 8):
        measure(detector, side)

    large = np.zeros((720, 1280, 3), np.uint8)
    with WrappedFrame(large) as frame:
        info = _capi.FrameInfo()
        _capi.lib.fk_frame_get_info(frame.handle, ctypes.byref(info))
        print(f"1280x720 RGB: FrameKit reads the array in place: {info.planes[0].data == large.ctypes.data}")


def measure(detector, side):
    image = np.random.default_rng(1).integers(0, 256, (side, side, 3), dtype=np.uint8)
    lib = _capi.lib
    with WrappedFrame(image) as frame:
        faces = ctypes.POINTER(_capi.CFace)()
        count = ctypes.c_size_t()
        error = _capi.Error()

        def raw():
            lib.fk_detect(detector._handle, frame.handle, ctypes.byref(faces), ctypes.byref(count), ctypes.byref(error))
            lib.fk_faces_free(faces)

        def wrapped():
            detector.detect(image)

        for function in (raw, wrapped):
            per_call(function, 200)  # warm-up: the network for this size set up
        calls = 500 if side > 16 else 20000
        rounds = [(per_call(raw, calls), per_call(wrapped, calls)) for _ in range(7)]
    raw_s = sorted(r for r, _ in rounds)[len(rounds) // 2]
    wrapped_s = sorted(w for _, w in rounds)[len(rounds) // 2]
    print(f"{side}x{side}: detect() {wrapped_s * 1e6:.1f} us a call, fk_detect through ctypes {raw_s * 1e6:.1f} us: "
          f"the package adds {(wrapped_s - raw_s) * 1e6:.1f} us (median of 7 rounds of {calls})")


if __name__ == "__main__":
    main()
