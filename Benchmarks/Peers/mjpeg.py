"""What the peers share: reading framekit-bench's clips (MJPEG: concatenated JPEGs) and the
output framekit-bench reads back — one JSON line of boxes per frame, then a last line with the
frames per second of the whole loop, decoding included."""
import json
import time

import cv2
import numpy as np


def frames(data):
    start = 0
    while True:
        end = data.find(b"\xff\xd9", start)
        if end < 0:
            return
        yield data[start:end + 2]
        start = end + 2


def run(path, detect):
    """Decodes every frame of the MJPEG file at `path` (BGR) and prints `detect(image)`'s boxes,
    [[x, y, width, height], ...] in the frame's pixels, for each."""
    data = open(path, "rb").read()
    began = time.perf_counter()
    count = 0
    for jpeg in frames(data):
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        print(json.dumps({"frame": count, "faces": detect(image)}))
        count += 1
    elapsed = time.perf_counter() - began
    print(json.dumps({"frames": count, "fps": count / elapsed if elapsed > 0 else 0}))
