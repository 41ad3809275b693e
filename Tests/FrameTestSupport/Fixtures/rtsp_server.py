# A real RTSP server for the tests (GStreamer's gst-rtsp-server, Debian's gir1.2-gst-rtsp-server-1.0):
# rtsp://127.0.0.1:PORT/test serves a live 320x240 30 fps H.264 test pattern. Prints "ready".
# Usage: python3 rtsp_server.py PORT
import signal
import sys
import gi
# Started from a test's thread, this process inherits that thread's blocked SIGTERM (Foundation's
# Process keeps the mask): unblocked, so the test's terminate() ends it instead of leaking it.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import Gst, GstRtspServer, GLib
Gst.init(None)
server = GstRtspServer.RTSPServer()
server.set_service(sys.argv[1])
factory = GstRtspServer.RTSPMediaFactory()
factory.set_launch("( videotestsrc is-live=true ! video/x-raw,width=320,height=240,framerate=30/1 ! x264enc tune=zerolatency key-int-max=30 speed-preset=veryfast ! rtph264pay name=pay0 pt=96 config-interval=1 )")
factory.set_shared(True)
server.get_mount_points().add_factory("/test", factory)
server.attach(None)
print("ready", flush=True)
GLib.MainLoop().run()
