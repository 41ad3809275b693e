import FrameStats

/// The preview's page: the live video, the live figures (polled from `/stats.json` once a
/// second) and, with several cameras, a button per camera (a same-origin POST to `/switch/N`).
/// Self-contained: nothing fetched from elsewhere.
enum PreviewPage {
    static func html(title: String, devices names: [String]) -> String {
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
            <style>body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#eee}img{max-width:100%;display:block;background:#000}
            #stats{font-family:monospace;white-space:pre;margin-top:.6em}button{margin-right:.4em}</style></head>
            <body><h1>\(escape(title))</h1>\(buttons)
            <img id="video" src="/stream.mjpeg" alt="live video">
            <div id="stats">waiting for stats…</div>
            <script>
            async function refresh() {
              try { const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();
                    document.getElementById('stats').textContent = Object.entries(s).map(([k, v]) => k + ': ' + JSON.stringify(v)).join('\\n'); }
              catch (e) {}
            }
            setInterval(refresh, 1000); refresh();
            </script></body></html>
            """
    }

    private static func escape(_ s: String) -> String { StatsReport.escape(s) }
}
