"""FrameKit's Python package as research code runs it on a video, beside the MediaPipe peer:
the same output (one JSON line of boxes per frame, then the frames per second of the whole loop,
decoding included: mjpeg.py's), each tool reading the clip its own way. MediaPipe's users
decode with OpenCV; FrameKit's open the file with `framekit.open`, whose reader decodes the next
frame on its own thread while the caller works on this one, and `FaceTracker.track` each frame
(a detector pass every few frames, faces followed between them: what `framekit detect` does).
`--decode opencv` reads the clip as the MediaPipe peer does instead (cv2.imdecode, BGR to RGB).

Installed into the MediaPipe peer's virtual environment (it has OpenCV and numpy) by
Benchmarks/Peers/setup-framekit-python.

Usage: .build/peers/mediapipe/bin/python framekit_peer.py [--decode opencv] CLIP.mjpeg
"""
import json
import sys
import time

import framekit

from mjpeg import run


def boxes(faces):
    return [[int(face.x), int(face.y), int(face.width), int(face.height)] for face in faces]


def main():
    tracker = framekit.FaceTracker()
    if sys.argv[1] == "--decode" and sys.argv[2] == "opencv":
        import cv2

        run(sys.argv[3], lambda image: boxes(tracker.track(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))))
        return
    began = time.perf_counter()
    count = 0
    with framekit.open(sys.argv[1]) as source:
        for frame in source:
            print(json.dumps({"frame": count, "faces": boxes(tracker.track(frame.image))}))
            count += 1
    elapsed = time.perf_counter() - began
    print(json.dumps({"frames": count, "fps": count / elapsed if elapsed > 0 else 0}))


if __name__ == "__main__":
    main()
