import FrameStats

/// The preview's page: the live video — H.264 through Media Source Extensions where the browser
/// has them and H.264 (the stream's own codec string decides), else the MJPEG stream; `/?mjpeg`
/// asks for MJPEG — the live figures (polled from `/stats.json` once a
/// second), with several cameras a button per camera (a same-origin POST to `/switch/N`) and,
/// when the controls are offered, an input per settable control (built from `/controls.json`;
/// a change is a POST to `/control/KEY/VALUE`). Self-contained: nothing fetched from elsewhere.
enum PreviewPage {
    static func html(title: String, devices names: [String], controls: Bool = false) -> String {
        let panel = controls ? #"<fieldset id="controls"><legend>Camera controls</legend></fieldset><div id="control-status"></div>"# : ""
        let script = controls ? controlsScript : ""
        let buttons =
            names.count > 1
            ? "<p id=\"devices\">Camera: "
                + names.enumerated().map {
                    "<button onclick=\"fetch('/switch/\($0.offset)', {method: 'POST'})\">\(escape($0.element))</button>"
                }.joined(separator: " ") + "</p>"
            : ""
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
            <style>body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#eee}img,video{max-width:100%;display:block;background:#000}#frame{position:relative;display:inline-block}
            #overlay{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}
            #stats{font-family:monospace;white-space:pre;margin-top:.6em}button{margin-right:.4em}
            fieldset label{display:inline-block;margin:.2em 1em .2em 0}#latency{font-family:monospace;margin-top:.6em}
            [hidden]{display:none!important}</style></head>
            <body><h1>\(escape(title))</h1>\(buttons)\(panel)
            <div id="frame"><video id="live" muted autoplay playsinline></video><canvas id="overlay"></canvas></div>
            <img id="video" alt="live video" hidden>
            <div id="latency" hidden></div>
            <div id="stats">waiting for stats…</div>
            <script>
            async function refresh() {
              try { const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();
                    document.getElementById('stats').textContent = Object.entries(s).map(([k, v]) => k + ': ' + JSON.stringify(v)).join('\\n'); }
              catch (e) {}
            }
            setInterval(refresh, 1000); refresh();
            \(videoScript)
            \(latencyScript)
            \(script)
            </script></body></html>
            """
    }

    /// Plays `/stream.mp4` through a MediaSource, kept near its newest frame (a tab in the
    /// background or a stall lets the buffer fall behind: it jumps to the live edge, and the
    /// played part is removed), or falls back to the MJPEG stream in the <img>.
    static let videoScript = #"""
        function showMJPEG() {
          const img = document.getElementById('video');
          document.getElementById('frame').hidden = true;
          document.getElementById('live').hidden = true;
          img.hidden = false;
          img.src = '/stream.mjpeg';
        }
        async function playH264() {
          const video = document.getElementById('live');
          if (!window.MediaSource || new URLSearchParams(location.search).has('mjpeg')) return false;
          let response;
          try { response = await fetch('/stream.mp4', {cache: 'no-store'}); } catch (e) { return false; }
          const type = response.headers.get('Content-Type') || '';
          if (!response.ok || !MediaSource.isTypeSupported(type)) { try { await response.body.cancel(); } catch (e) {} return false; }
          const source = new MediaSource();
          video.src = URL.createObjectURL(source);
          await new Promise(resolve => source.addEventListener('sourceopen', resolve, {once: true}));
          const buffer = source.addSourceBuffer(type);
          const queue = [];
          const pump = () => { if (!buffer.updating && queue.length) buffer.appendBuffer(queue.shift()); };
          buffer.addEventListener('updateend', () => {
            const b = buffer.buffered;
            if (b.length) {
              const end = b.end(b.length - 1);
              const lag = end - video.currentTime;
              if (video.currentTime < b.start(0) || lag > 0.5) video.currentTime = Math.max(b.start(0), end - 0.03);
              // Chromium keeps a few frames buffered ahead: played a little fast, the picture
              // stays within about 0.15 s of the newest frame without a jump.
              else video.playbackRate = lag > 0.15 ? 1.1 : lag < 0.08 ? 1 : video.playbackRate;
              if (video.currentTime - b.start(0) > 10 && !buffer.updating) { buffer.remove(b.start(0), video.currentTime - 5); return; }
            }
            pump();
          });
          video.play().catch(() => {});
          if (video.requestVideoFrameCallback) {
            const shown = (now, frame) => { showingFrame(video, frame.mediaTime); video.requestVideoFrameCallback(shown); };
            video.requestVideoFrameCallback(shown);
          }
          followFaces();
          const reader = response.body.getReader();
          for (;;) {
            const {value, done} = await reader.read();
            if (done) break;
            queue.push(value);
            pump();
          }
          return true;
        }
        // The faces of the stream's frames by their time (/faces.ndjson), drawn over the frame with
        // that time as it is shown: boxes on the frame they were found in. With ?latency, the
        // frame's stamp is checked against the capture time its faces came with.
        const faces = {entries: new Map(), after: null, shown: 0, matched: 0, boxes: 0, checked: 0, agreed: 0, movedOn: 0, mismatches: []};
        window.framekitFaces = faces;
        async function followFaces() {
          try {
            const reader = (await fetch('/faces.ndjson', {cache: 'no-store'})).body.getReader();
            const decoder = new TextDecoder();
            let text = '';
            for (;;) {
              const {value, done} = await reader.read();
              if (done) break;
              text += decoder.decode(value, {stream: true});
              let newline;
              while ((newline = text.indexOf('\n')) >= 0) {
                const f = JSON.parse(text.slice(0, newline));
                text = text.slice(newline + 1);
                if (faces.after !== null && f.t <= faces.after - 1) faces.entries.clear(); // a new stream: its timeline restarted
                faces.entries.set(Math.round(f.t * 1000), f);
                faces.after = f.t;
              }
              if (faces.entries.size > 600) {
                const keys = [...faces.entries.keys()].sort((a, b) => a - b);
                for (const k of keys.slice(0, keys.length - 300)) faces.entries.delete(k);
              }
            }
          } catch (e) {}
        }
        function showingFrame(video, mediaTime) {
          const canvas = document.getElementById('overlay');
          if (canvas.width !== video.videoWidth || canvas.height !== video.videoHeight) { canvas.width = video.videoWidth; canvas.height = video.videoHeight; }
          const context = canvas.getContext('2d');
          context.clearRect(0, 0, canvas.width, canvas.height);
          faces.shown++;
          const key = Math.round(mediaTime * 1000);
          const entry = faces.entries.get(key) || faces.entries.get(key - 1) || faces.entries.get(key + 1);
          const stamp = window.framekitLatency ? readStamp(video, video.videoWidth, video.videoHeight) : null;
          if (stamp !== null) record(stamp);
          if (!entry) return;
          faces.matched++;
          if (stamp !== null) {
            faces.checked++;
            if (Math.abs(entry.c - stamp) <= 2) {
              faces.agreed++;
            } else {
              // The picture read is not always the frame the callback is for (browsers keep them
              // in step "as a best effort"): a stamp that is a neighbouring frame's capture time
              // says the picture had moved on, not that faces and frame disagree.
              const near = [...faces.entries.values()].find(e => Math.abs(e.c - stamp) <= 2 && Math.abs(e.t - mediaTime) <= 0.1);
              if (near) faces.movedOn++;
              if (faces.mismatches.length < 8) faces.mismatches.push({t: mediaTime, c: entry.c, stamp: stamp, near: near ? near.t : null});
            }
          }
          context.strokeStyle = '#0f0';
          context.lineWidth = Math.max(2, Math.round(canvas.width / 320));
          for (const [x, y, w, h] of entry.faces) { context.strokeRect(x, y, w, h); faces.boxes++; }
        }
        playH264().then(ok => { if (!ok) showMJPEG(); }, showMJPEG);
        """#

    /// With `?latency`, on frames stamped by `CaptureTimeStamp` (`--stamp-capture-time`): each
    /// shown frame's capture time read back from the picture (a canvas copy of its top strip)
    /// against the clock when it is shown — the video's frames as they are presented
    /// (`requestVideoFrameCallback`), the MJPEG picture's at each repaint — into
    /// `window.framekitLatency.samples` (milliseconds; `times`, when each was taken), for a test
    /// or a person to read.
    static let latencyScript = #"""
        const latency = {samples: [], times: [], last: null};
        function readStamp(source, width, height) {
          const side = Math.max(2, Math.floor(width / 40) & ~1);
          if (!width || height < side) return null;
          const canvas = readStamp.canvas || (readStamp.canvas = document.createElement('canvas'));
          canvas.width = side * 40; canvas.height = side;
          const context = canvas.getContext('2d', {willReadFrequently: true});
          context.drawImage(source, 0, 0, side * 40, side, 0, 0, side * 40, side);
          const pixels = context.getImageData(0, 0, side * 40, side).data;
          let value = 0, check = 0;
          for (let i = 0; i < 40; i++) {
            const o = ((side >> 1) * side * 40 + i * side + (side >> 1)) * 4;
            const bit = pixels[o] * 0.299 + pixels[o + 1] * 0.587 + pixels[o + 2] * 0.114 > 128 ? 1 : 0;
            if (i < 32) value = value * 2 + bit; else check = check * 2 + bit;
          }
          const sum = (Math.floor(value / 16777216) + (Math.floor(value / 65536) & 255) + (Math.floor(value / 256) & 255) + (value & 255)) & 255;
          return sum === check ? value : null;
        }
        function record(stamp) {
          if (stamp === null || stamp === latency.last) return;
          latency.last = stamp;
          const age = ((Date.now() % 4294967296) - stamp + 4294967296) % 4294967296;
          if (age < 60000) { latency.samples.push(age); latency.times.push(performance.now()); }
        }
        function measureLatency() {
          // The video's frames are read as they are shown (showingFrame); the picture's here.
          window.framekitLatency = latency;
          const img = document.getElementById('video');
          const paint = () => {
            if (!img.hidden && img.complete && img.naturalWidth) record(readStamp(img, img.naturalWidth, img.naturalHeight));
            requestAnimationFrame(paint);
          };
          requestAnimationFrame(paint);
          // The figures on the page too, over the last 300 frames; a hint while none is read.
          const line = document.getElementById('latency');
          line.hidden = false;
          line.textContent = 'capture to screen: waiting for stamped frames…';
          const started = performance.now();
          setInterval(() => {
            const s = latency.samples.slice(-300).sort((a, b) => a - b);
            if (s.length) {
              const q = p => s[Math.min(s.length - 1, Math.floor(p * s.length))];
              line.textContent = 'capture to screen: p50 ' + q(0.5) + ' ms, p95 ' + q(0.95) + ' ms, max ' + s[s.length - 1] +
                ' ms (last ' + s.length + ' frames)';
            } else if (performance.now() - started > 3000) {
              line.textContent = 'capture to screen: no stamped frame read — start framekit preview with --stamp-capture-time';
            }
          }, 1000);
        }
        if (new URLSearchParams(location.search).has('latency')) measureLatency();
        """#

    /// Builds the controls panel from `/controls.json` and POSTs each change.
    static let controlsScript = #"""
        async function loadControls() {
          const box = document.getElementById('controls');
          let list = [];
          try { list = await (await fetch('/controls.json', {cache: 'no-store'})).json(); } catch (e) { return; }
          box.querySelectorAll('label').forEach(l => l.remove());
          for (const c of list) {
            if (!c.settable) continue;
            const label = document.createElement('label');
            label.textContent = c.name + ' ';
            let input;
            if (c.type === 'menu' || c.type === 'intmenu') {
              input = document.createElement('select');
              for (const m of c.menu) { const o = document.createElement('option'); o.value = m.index; o.textContent = m.name; input.appendChild(o); }
            } else if (c.type === 'bool') {
              input = document.createElement('input'); input.type = 'checkbox'; input.checked = c.value === 1;
            } else if (c.type === 'button') {
              input = document.createElement('button'); input.textContent = 'run'; input.type = 'button';
            } else {
              input = document.createElement('input'); input.type = 'number'; input.min = c.min; input.max = c.max; input.step = c.step;
            }
            if (c.value !== null && input.type !== 'checkbox') input.value = c.value;
            input.id = 'control-' + c.key;
            input.disabled = c.flags.includes('inactive');
            const send = async () => {
              const v = input.type === 'checkbox' ? (input.checked ? 1 : 0) : (c.type === 'button' ? 1 : input.value);
              const r = await fetch('/control/' + c.key + '/' + v, {method: 'POST'});
              const answer = await r.json();
              document.getElementById('control-status').textContent = r.ok ? c.key + ' = ' + answer.value : answer.error;
              loadControls();
            };
            input.addEventListener(c.type === 'button' ? 'click' : 'change', send);
            label.appendChild(input);
            box.appendChild(label);
          }
        }
        loadControls();
        """#

    private static func escape(_ s: String) -> String { StatsReport.escape(s) }
}
