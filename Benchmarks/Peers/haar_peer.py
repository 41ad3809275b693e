"""The Python peer framekit-bench measures FrameKit against: what a researcher writes with
OpenCV's Python bindings. Haar cascade (scaleFactor 1.1, minNeighbors 3) on the frame at half
resolution, one thread. Reads an MJPEG file, prints one JSON line of boxes per frame, then a
last line with the frames per second of the whole loop (decode included).

Usage: /usr/bin/python3 haar_peer.py CLIP.mjpeg
"""
import json
import sys
import time

import cv2
import numpy as np

CASCADE = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"


def frames(data):
    start = 0
    while True:
        end = data.find(b"\xff\xd9", start)
        if end < 0:
            return
        yield data[start:end + 2]
        start = end + 2


def main():
    cv2.setNumThreads(1)
    cascade = cv2.CascadeClassifier(CASCADE)
    if cascade.empty():
        sys.exit("cannot load " + CASCADE)
    data = open(sys.argv[1], "rb").read()
    began = time.perf_counter()
    count = 0
    for jpeg in frames(data):
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        small = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        found = cascade.detectMultiScale(small, scaleFactor=1.1, minNeighbors=3)
        boxes = [[int(v) * 2 for v in box] for box in found]
        print(json.dumps({"frame": count, "faces": boxes}))
        count += 1
    elapsed = time.perf_counter() - began
    print(json.dumps({"frames": count, "fps": count / elapsed if elapsed > 0 else 0}))


if __name__ == "__main__":
    main()
