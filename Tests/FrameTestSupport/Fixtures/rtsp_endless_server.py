# A hostile RTSP server for the tests: RTSP/1.0 over TCP with interleaved RTP (what FrameKit asks
# for), one H.264 track. After PLAY it sends the access units of an Annex B file (RTP packets of
# single NAL units, FU-A where a NAL is over 1,400 bytes), then the first fragment of an IDR NAL
# unit and MiB of middle fragments that never end it (no zero byte in them, so no start code
# either), then closes. Prints "ready PORT" once it listens.
# Usage: python3 rtsp_endless_server.py STREAM.h264 MEBIBYTES
import base64
import socket
import struct
import sys

stream = open(sys.argv[1], "rb").read()
mebibytes = int(sys.argv[2])


def nal_units(data):
    """The NAL units of an Annex B stream, without their start codes."""
    starts = []
    i = 0
    while True:
        i = data.find(b"\x00\x00\x01", i)
        if i < 0:
            break
        starts.append(i + 3)
        i += 3
    units = []
    for n, start in enumerate(starts):
        end = starts[n + 1] - 3 if n + 1 < len(starts) else len(data)
        unit = data[start:end]
        while unit.endswith(b"\x00"):
            unit = unit[:-1]
        units.append(unit)
    return units


units = nal_units(stream)
sps = next(u for u in units if u[0] & 0x1F == 7)
pps = next(u for u in units if u[0] & 0x1F == 8)
sdp = (
    "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=endless\r\nc=IN IP4 0.0.0.0\r\nt=0 0\r\n"
    "m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\n"
    "a=fmtp:96 packetization-mode=1;sprop-parameter-sets=%s,%s\r\na=control:track1\r\n"
    % (base64.b64encode(sps).decode(), base64.b64encode(pps).decode())
)

server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(1)
print("ready %d" % server.getsockname()[1], flush=True)
connection, _ = server.accept()
reader = connection.makefile("rb")
sequence = 0


def rtp(payload, timestamp, marker):
    global sequence
    header = struct.pack("!BBHII", 0x80, (0x80 if marker else 0) | 96, sequence & 0xFFFF, timestamp, 0x1234)
    sequence += 1
    packet = header + payload
    connection.sendall(b"$\x00" + struct.pack("!H", len(packet)) + packet)


def send_unit(unit, timestamp, last):
    if len(unit) <= 1400:
        rtp(unit, timestamp, last)
        return
    indicator = (unit[0] & 0xE0) | 28
    kind = unit[0] & 0x1F
    body = unit[1:]
    for offset in range(0, len(body), 1400):
        start = offset == 0
        end = offset + 1400 >= len(body)
        header = bytes([indicator, (0x80 if start else 0) | (0x40 if end else 0) | kind])
        rtp(header + body[offset : offset + 1400], timestamp, last and end)


def respond(request):
    lines = request.split("\r\n")
    method = lines[0].split(" ")[0]
    cseq = next((l.split(":", 1)[1].strip() for l in lines if l.lower().startswith("cseq")), "0")
    head = "RTSP/1.0 200 OK\r\nCSeq: %s\r\n" % cseq
    if method == "OPTIONS":
        head += "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN\r\n\r\n"
    elif method == "DESCRIBE":
        url = lines[0].split(" ")[1]
        head += "Content-Base: %s/\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s" % (url, len(sdp), sdp)
    elif method == "SETUP":
        head += "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\nSession: 12345678\r\n\r\n"
    else:
        head += "Session: 12345678\r\n\r\n"
    connection.sendall(head.encode())
    return method


try:
    while True:
        request = b""
        while not request.endswith(b"\r\n\r\n"):
            byte = reader.read(1)
            if not byte:
                raise OSError("closed")
            request += byte
        if respond(request.decode("latin-1")) == "PLAY":
            break
    # The access units: a new one at each slice that starts a picture (first_mb_in_slice 0:
    # the first bit after the NAL header is 1).
    timestamp = 0
    for n, unit in enumerate(units):
        following = units[n + 1] if n + 1 < len(units) else None
        ends_picture = following is None or (following[0] & 0x1F in (1, 5) and following[1] & 0x80) or following[0] & 0x1F in (7, 8, 9)
        send_unit(unit, timestamp, ends_picture and unit[0] & 0x1F in (1, 5))
        if ends_picture and unit[0] & 0x1F in (1, 5):
            timestamp += 3000
    # An IDR NAL unit that never ends.
    junk = bytes(range(1, 256)) * 5 + bytes(range(1, 126))
    rtp(bytes([0x65 & 0xE0 | 28, 0x80 | 5]) + junk, timestamp, False)
    for _ in range(mebibytes * 1024 * 1024 // len(junk)):
        rtp(bytes([0x65 & 0xE0 | 28, 5]) + junk, timestamp, False)
except OSError:
    pass
connection.close()
