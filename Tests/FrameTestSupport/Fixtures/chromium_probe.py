#!/usr/bin/env python3
"""Drives a real headless Chromium over the DevTools protocol (on a pipe: no port, no package
beyond Python's own) for FrameKit's browser tests.

    chromium_probe.py URL SECONDS EXPRESSION

Opens URL, then evaluates EXPRESSION (JavaScript giving a JSON-able value; it may return a
promise) in the page every 0.25 s for SECONDS, and prints each value as one JSON line. The last
line is the last value. Exit 0 when the page was opened and evaluated; 2 when Chromium could
not be driven (its message on stderr)."""
import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time


def main():
    url, seconds, expression = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    # Chromium reads commands from fd 3 and writes replies to fd 4, each a JSON text ending in NUL.
    # The child's ends are put at 3 and 4 here, in this process, and kept there for the child
    # (subprocess closes every other descriptor after any preexec_fn, so they cannot be moved
    # there in the child). Our own ends are moved high first, out of the way.
    ends = [os.pipe(), os.pipe()]
    high = [[fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in pair] for pair in ends]
    for pair in ends:
        for fd in pair:
            os.close(fd)
    (to_browser_r, to_browser_w), (from_browser_r, from_browser_w) = high
    os.dup2(to_browser_r, 3)
    os.dup2(from_browser_w, 4)
    os.close(to_browser_r)
    os.close(from_browser_w)
    profile = tempfile.mkdtemp(prefix="framekit-chromium-")
    browser = subprocess.Popen(
        ["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
         "--autoplay-policy=no-user-gesture-required", "--mute-audio", "--no-first-run",
         "--user-data-dir=" + profile, "--window-size=1400,1000", "about:blank"],
        pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=None if os.environ.get("PROBE_DEBUG") else subprocess.DEVNULL)
    os.close(3)
    os.close(4)
    out = os.fdopen(to_browser_w, "wb", buffering=0)
    inp = os.fdopen(from_browser_r, "rb", buffering=0)
    pending = b""
    counter = [0]

    def call(method, params=None, session=None, timeout=60):
        nonlocal pending
        counter[0] += 1
        message = {"id": counter[0], "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        out.write(json.dumps(message).encode() + b"\0")
        deadline = time.time() + timeout
        while time.time() < deadline:
            while b"\0" in pending:
                raw, pending = pending.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == counter[0]:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply.get("result", {})
            chunk = inp.read(65536)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            pending += chunk
        raise RuntimeError(f"{method}: no reply in {timeout} s")

    try:
        target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        call("Page.enable", session=session)
        call("Page.navigate", {"url": url}, session=session)
        end = time.time() + seconds
        while True:
            result = call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                          session=session)
            value = result.get("result", {}).get("value")
            print(json.dumps(value), flush=True)
            if time.time() >= end:
                break
            time.sleep(0.25)
        return 0
    except Exception as error:  # noqa: BLE001 - any failure to drive the browser is reported
        print(f"chromium_probe: {error}", file=sys.stderr)
        return 2
    finally:
        browser.kill()
        browser.wait()
        subprocess.run(["rm", "-rf", profile])


if __name__ == "__main__":
    sys.exit(main())
