import FrameKit
print("framekit")
