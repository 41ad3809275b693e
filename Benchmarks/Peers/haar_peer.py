"""The Python peer framekit-bench measures FrameKit against: what a researcher writes with
OpenCV's Python bindings. Haar cascade (scaleFactor 1.1, minNeighbors 3) on the frame at half
resolution, one thread. Reads an MJPEG file, prints one JSON line of boxes per frame, then a
last line with the frames per second of the whole loop (decode included).

Usage: /usr/bin/python3 haar_peer.py CLIP.mjpeg
"""
import sys

import cv2

from mjpeg import run

CASCADE = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_default.xml"



def main():
    cv2.setNumThreads(1)
    cascade = cv2.CascadeClassifier(CASCADE)
    if cascade.empty():
        sys.exit("cannot load " + CASCADE)

    def detect(image):
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        small = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2), interpolation=cv2.INTER_AREA)
        found = cascade.detectMultiScale(small, scaleFactor=1.1, minNeighbors=3)
        return [[int(v) * 2 for v in box] for box in found]

    run(sys.argv[1], detect)


if __name__ == "__main__":
    main()
