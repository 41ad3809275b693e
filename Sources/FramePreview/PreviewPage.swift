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
            <style>body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#eee}img,video{max-width:100%;display:block;background:#000}
            #stats{font-family:monospace;white-space:pre;margin-top:.6em}button{margin-right:.4em}
            fieldset label{display:inline-block;margin:.2em 1em .2em 0}</style></head>
            <body><h1>\(escape(title))</h1>\(buttons)\(panel)
            <video id="live" muted autoplay playsinline></video><img id="video" alt="live video" hidden>
            <div id="stats">waiting for stats…</div>
            <script>
            async function refresh() {
              try { const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();
                    document.getElementById('stats').textContent = Object.entries(s).map(([k, v]) => k + ': ' + JSON.stringify(v)).join('\\n'); }
              catch (e) {}
            }
            setInterval(refresh, 1000); refresh();
            \(videoScript)
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
              if (video.currentTime < b.start(0) || end - video.currentTime > 0.5) video.currentTime = Math.max(b.start(0), end - 0.05);
              if (video.currentTime - b.start(0) > 10 && !buffer.updating) { buffer.remove(b.start(0), video.currentTime - 5); return; }
            }
            pump();
          });
          video.play().catch(() => {});
          const reader = response.body.getReader();
          for (;;) {
            const {value, done} = await reader.read();
            if (done) break;
            queue.push(value);
            pump();
          }
          return true;
        }
        playH264().then(ok => { if (!ok) showMJPEG(); }, showMJPEG);
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
