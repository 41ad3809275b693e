import Foundation

/// What the preview server answers to one request, decided without a socket: the page, the
/// MJPEG stream (which the server then runs), stats, camera switching and controls, behind the
/// server's security rules (fixed routes, the `Host` check, state changes by same-origin POST,
/// controls from loopback peers only). The metrics routes are ``MetricsRoutes``'. Tests give it
/// a request and read the answer's bytes.
struct PreviewRoutes {
    enum Reply: Equatable {
        /// A whole response.
        case bytes([UInt8])
        /// The MJPEG stream, after its header (`head`: the header only).
        case stream(head: Bool)
        /// The H.264 stream (fragmented MP4), after its header.
        case videoStream(head: Bool)
        /// The H.264 stream's faces, a JSON line a frame as the frames come, after its header.
        case facesStream(head: Bool)
    }

    /// What the page's controls panel calls: the list as JSON, and a setter answering with
    /// the JSON to send and whether it worked.
    struct ControlHandlers {
        var list: @Sendable () -> String
        var set: @Sendable (_ key: String, _ value: String) -> (ok: Bool, json: String)
    }

    var configuration: PreviewServer.Configuration
    /// The cameras the page offers to switch between, and the switch.
    var devices: [String] = []
    var switcher: (@Sendable (Int) -> Bool)?
    var controls: ControlHandlers?
    var metrics: MetricsRoutes?
    /// What `/stats.json` serves.
    var statsJSON: () -> String = { "{}" }
    /// What `/faces.json?after=T` serves (T: nil when absent or not a number).
    var facesJSON: (Double?) -> String = { _ in "{\"frames\": []}" }

    /// The answer to `outcome` (nil: nothing to send yet). `peerIsLoopback` is asked only for a
    /// request that changes a control.
    func reply(to outcome: HTTPRequest.Outcome, peerIsLoopback: () -> Bool) -> Reply? {
        let request: HTTPRequest
        switch outcome {
        case .request(let r): request = r
        case .refused(let status, let reason):
            return .bytes(
                HTTPResponse.make(status, HTTPResponse.reasonPhrase(status), "text/plain", Array((reason + "\n").utf8), head: false))
        case .incomplete:
            return nil // never handed over: the accepting thread waits for a whole head
        }
        let head = request.method == "HEAD"
        guard !configuration.checksHost || hostIsAllowed(request.header("host")) else {
            return .bytes(
                HTTPResponse.make(
                    421, "Misdirected Request", "text/plain", Array("this server does not answer for that Host\n".utf8), head: head))
        }
        // Fixed routes only: the target is compared as it is, never mapped to a file.
        let path = request.target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.target
        if path.hasPrefix("/control/") {
            let parts = path.dropFirst("/control/".count).split(separator: "/", omittingEmptySubsequences: false)
            guard let controls, parts.count == 2,
                parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } })
            else { return Self.notFound(head: head) }
            if let refusal = Self.refusal(ofStateChange: request, head: head, loopbackOnly: true, peerIsLoopback: peerIsLoopback) {
                return .bytes(refusal)
            }
            let (ok, json) = controls.set(String(parts[0]), String(parts[1]))
            return .bytes(
                HTTPResponse.make(
                    ok ? 200 : 422, ok ? "OK" : "Unprocessable Content", "application/json", Array((json + "\n").utf8), head: false))
        }
        if path.hasPrefix("/switch/") {
            // The one state change: POST only, same origin only, and only with a choice to make.
            guard devices.count > 1, let index = Int(path.dropFirst("/switch/".count)), index >= 0, index < devices.count,
                let switcher
            else { return Self.notFound(head: head) }
            if let refusal = Self.refusal(ofStateChange: request, head: head, loopbackOnly: false, peerIsLoopback: peerIsLoopback) {
                return .bytes(refusal)
            }
            let ok = switcher(index)
            return .bytes(
                HTTPResponse.make(
                    ok ? 200 : 500, ok ? "OK" : "Internal Server Error", "application/json", Array("{\"switched\": \(ok)}\n".utf8),
                    head: false))
        }
        guard request.method == "GET" || head else {
            return .bytes(
                HTTPResponse.make(
                    405, "Method Not Allowed", "text/plain", Array("GET or HEAD only\n".utf8), head: false, extra: "Allow: GET, HEAD\r\n"))
        }
        if let metrics, let answer = metrics.reply(to: path, head: head) { return .bytes(answer) }
        guard configuration.servesPages else { return Self.notFound(head: head) }
        switch path {
        case "/":
            let page = PreviewPage.html(title: configuration.title, devices: devices, controls: controls != nil)
            return .bytes(HTTPResponse.make(200, "OK", "text/html; charset=utf-8", Array(page.utf8), head: head))
        case "/stats.json":
            return .bytes(HTTPResponse.make(200, "OK", "application/json", Array((statsJSON() + "\n").utf8), head: head))
        case "/faces.json":
            let query = request.target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            let after = query.split(separator: "&").first { $0.hasPrefix("after=") }.flatMap { Double($0.dropFirst("after=".count)) }
            return .bytes(
                HTTPResponse.make(
                    200, "OK", "application/json", Array((facesJSON(after.flatMap { $0.isFinite ? $0 : nil }) + "\n").utf8), head: head))
        case "/controls.json" where controls != nil:
            return .bytes(HTTPResponse.make(200, "OK", "application/json", Array(((controls?.list() ?? "[]") + "\n").utf8), head: head))
        case "/stream.mjpeg":
            return .stream(head: head)
        case "/stream.mp4":
            return .videoStream(head: head)
        case "/faces.ndjson":
            return .facesStream(head: head)
        default:
            return Self.notFound(head: head)
        }
    }

    static func notFound(head: Bool) -> Reply {
        .bytes(HTTPResponse.make(404, "Not Found", "text/plain", Array("not found\n".utf8), head: head))
    }

    /// The rules for a request that changes state: POST only, no cross-origin `Origin`, and
    /// (`loopbackOnly`) a peer on this machine. The refusal to send, or nil when it may go on.
    static func refusal(ofStateChange request: HTTPRequest, head: Bool, loopbackOnly: Bool, peerIsLoopback: () -> Bool) -> [UInt8]? {
        guard request.method == "POST" else {
            return HTTPResponse.make(
                405, "Method Not Allowed", "text/plain", Array("POST only\n".utf8), head: head, extra: "Allow: POST\r\n")
        }
        if isCrossSite(request) {
            return HTTPResponse.make(403, "Forbidden", "text/plain", Array("cross-origin request refused\n".utf8), head: false)
        }
        if loopbackOnly && !peerIsLoopback() {
            return HTTPResponse.make(
                403, "Forbidden", "text/plain", Array("device controls are changed from this machine only\n".utf8), head: false)
        }
        return nil
    }

    /// Whether a browser says the request comes from another site: any `Origin` but this
    /// server's (every one, where a client sent two), `Sec-Fetch-Site` other than same-origin or
    /// none (typed by the user), or, without `Origin`, a `Referer` from elsewhere.
    static func isCrossSite(_ request: HTTPRequest) -> Bool {
        let own = "http://" + (request.header("host") ?? "")
        let origins = request.headers.filter { $0.name == "origin" }.map(\.value)
        if origins.contains(where: { $0 != own }) { return true }
        if let site = request.header("sec-fetch-site"), site != "same-origin" && site != "none" { return true }
        if origins.isEmpty, let referer = request.header("referer"), referer != own && !referer.hasPrefix(own + "/") { return true }
        return false
    }

    /// Whether `Host` names this server: its bound address or `localhost` (any port), or an
    /// allowed name. Anything else is a DNS-rebinding page or a misdirected request.
    func hostIsAllowed(_ host: String?) -> Bool {
        guard let host = host?.lowercased(), !host.isEmpty else { return false }
        var name = Substring(host)
        if name.hasPrefix("[") { // [::1]:8080: an IPv6 literal, then nothing or a port
            guard let close = name.firstIndex(of: "]") else { return false }
            let port = name[name.index(after: close)...]
            guard port.isEmpty || port.first == ":" && port.dropFirst().allSatisfy(\.isNumber) else { return false }
            name = name[name.index(after: name.startIndex)..<close]
            guard name.contains(":") else { return false } // [localhost] is no address
        } else if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...].allSatisfy(\.isNumber) else { return false }
            name = name[..<colon]
        }
        let allowed = Set(
            [configuration.host.lowercased(), "localhost", "127.0.0.1", "::1"] + configuration.allowedHosts.map { $0.lowercased() })
        return allowed.contains(String(name))
    }
}

/// `GET /metrics` (Prometheus' text format) and `GET /healthz` (200 while healthy, else 503),
/// for schedulers and scrapers: the metrics server's routes, served beside the preview's or
/// alone (`framekit detect --metrics-port`).
struct MetricsRoutes {
    var text: @Sendable () -> String
    var healthy: @Sendable () -> Bool

    /// The response for `path` (a GET or HEAD), or nil for a path that is not a metrics route.
    func reply(to path: String, head: Bool) -> [UInt8]? {
        switch path {
        case "/metrics":
            return HTTPResponse.make(200, "OK", "text/plain; version=0.0.4; charset=utf-8", Array(text().utf8), head: head)
        case "/healthz":
            let ok = healthy()
            return HTTPResponse.make(
                ok ? 200 : 503, ok ? "OK" : "Service Unavailable", "text/plain",
                Array((ok ? "ok\n" : "stalled: no frame from a source lately\n").utf8), head: head)
        default:
            return nil
        }
    }
}
