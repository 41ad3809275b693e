"""The detection peer a user would pick instead of FrameKit: MediaPipe Face Detection (BlazeFace,
full-range model, TFLite with XNNPACK on the CPU), through its Python solution API. Reads an
MJPEG file, prints one JSON line of boxes per frame, then a last line with the frames per second
of the whole loop (decode included), as haar_peer.py does.

mediapipe 0.10.14 is pinned: its wheel ships the BlazeFace models; later releases download them
at run time, which cannot work here. Installed into its own virtual environment (it brings its own
OpenCV and numpy) by Benchmarks/Peers/setup-mediapipe.

Usage: .build/peers/mediapipe/bin/python mediapipe_peer.py CLIP.mjpeg
"""
import sys

import cv2
import mediapipe as mp

from mjpeg import run



def main():
    # model_selection=1: the full-range model (faces up to 5 m); 0, the short-range one, finds
    # far fewer faces in these clips.
    detector = mp.solutions.face_detection.FaceDetection(model_selection=1, min_detection_confidence=0.5)

    def detect(image):
        height, width = image.shape[:2]
        result = detector.process(cv2.cvtColor(image, cv2.COLOR_BGR2RGB))
        boxes = []
        for detection in result.detections or []:
            box = detection.location_data.relative_bounding_box
            boxes.append([int(box.xmin * width), int(box.ymin * height), int(box.width * width), int(box.height * height)])
        return boxes

    run(sys.argv[1], detect)


if __name__ == "__main__":
    main()
