import Foundation
import Synchronization
import Testing

@testable import FramePreview

/// The preview's and the metrics' routes, with no socket: a request in, the answer's bytes out.
@Suite("Preview and metrics routes, without sockets")
struct PreviewRoutesTests {
    func request(_ text: String) -> HTTPRequest.Outcome { HTTPRequest.parse(Array(text.utf8)[...]) }

    func status(_ reply: PreviewRoutes.Reply?) -> Int? {
        guard case .bytes(let bytes)? = reply, let line = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n").first else {
            return nil
        }
        return Int(line.split(separator: " ")[1])
    }

    func body(_ reply: PreviewRoutes.Reply?) -> String {
        guard case .bytes(let bytes)? = reply else { return "" }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    }

    @Test("the page, stats and stream for GET and HEAD; fixed routes only; other methods 405")
    func pages() {
        var configuration = PreviewServer.Configuration()
        configuration.title = "Bench camera"
        let routes = PreviewRoutes(configuration: configuration, statsJSON: { #"{"frames": 3}"# })
        let loopback = { true }
        let page = routes.reply(to: request("GET / HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"), peerIsLoopback: loopback)
        #expect(status(page) == 200 && body(page).contains("Bench camera"))
        #expect(
            body(routes.reply(to: request("GET /stats.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), peerIsLoopback: loopback))
                == "{\"frames\": 3}\n")
        // /faces.json?after=T: T parsed as a number, or none.
        let asked = Mutex<[Double?]>([])
        var faceRoutes = routes
        faceRoutes.facesJSON = { after in
            asked.withLock { $0.append(after) }
            return "{\"frames\": []}"
        }
        for target in ["/faces.json?after=1.5", "/faces.json", "/faces.json?after=nope", "/faces.json?x=1&after=2"] {
            #expect(
                status(faceRoutes.reply(to: request("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: loopback)) == 200)
        }
        #expect(asked.withLock { $0 } == [1.5, nil, nil, 2])
        let streams: [(String, PreviewRoutes.Reply)] = [
            ("GET /stream.mjpeg", .stream(head: false)), ("HEAD /stream.mjpeg", .stream(head: true)),
            ("GET /stream.mp4", .videoStream(head: false)), ("HEAD /stream.mp4", .videoStream(head: true)),
            ("GET /faces.ndjson", .facesStream(head: false))
        ]
        for (line, reply) in streams {
            #expect(routes.reply(to: request(line + " HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: loopback) == reply, "\(line)")
        }
        #expect(
            status(routes.reply(to: request("POST /stream.mp4 HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: loopback)) == 405)
        #expect(
            status(routes.reply(to: request("GET /../etc/passwd HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: loopback)) == 404)
        #expect(status(routes.reply(to: request("DELETE / HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: loopback)) == 405)
        #expect(routes.reply(to: request("GET / HTTP/1.1\r\nHost: local"), peerIsLoopback: loopback) == nil) // a head not whole yet
    }

    @Test("a Host that does not name the server is 421 (DNS rebinding); allowed names and the bound address pass")
    func hostCheck() {
        var configuration = PreviewServer.Configuration()
        configuration.allowedHosts = ["camera.lan"]
        let routes = PreviewRoutes(configuration: configuration)
        for host in ["evil.example", "127.0.0.2", "[localhost]", "localhost:80x", ""] {
            #expect(
                status(routes.reply(to: request("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n"), peerIsLoopback: { true })) == 421, "\(host)")
        }
        for host in ["camera.lan:8080", "LOCALHOST", "[::1]:8080", "127.0.0.1:1"] {
            #expect(
                status(routes.reply(to: request("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n"), peerIsLoopback: { true })) == 200, "\(host)")
        }
    }

    @Test("controls change by same-origin POST from this machine only; switching by same-origin POST with a choice to make")
    func stateChanges() {
        let set = Mutex<[String]>([])
        let switched = Mutex<[Int]>([])
        let routes = PreviewRoutes(
            configuration: PreviewServer.Configuration(), devices: ["a", "b"],
            switcher: { i in
                switched.withLock { $0.append(i) }
                return true
            },
            controls: .init(
                list: { "[]" },
                set: { key, value in
                    set.withLock { $0.append("\(key)=\(value)") }
                    return (true, "{}")
                }))
        let post = "POST /control/brightness/90 HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://localhost:8080\r\n\r\n"
        #expect(status(routes.reply(to: request(post), peerIsLoopback: { false })) == 403)
        #expect(status(routes.reply(to: request(post), peerIsLoopback: { true })) == 200)
        let crossSite = "POST /control/brightness/10 HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: http://evil.example\r\n\r\n"
        #expect(status(routes.reply(to: request(crossSite), peerIsLoopback: { true })) == 403)
        #expect(
            status(routes.reply(to: request("GET /control/brightness/10 HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: { true }))
                == 405)
        #expect(
            status(routes.reply(to: request("POST /control/bright%20ness/1 HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: { true }))
                == 404)
        #expect(set.withLock { $0 } == ["brightness=90"])
        let switchTo = "POST /switch/1 HTTP/1.1\r\nHost: localhost:8080\r\nSec-Fetch-Site: same-origin\r\n\r\n"
        #expect(status(routes.reply(to: request(switchTo), peerIsLoopback: { false })) == 200)
        #expect(status(routes.reply(to: request("POST /switch/2 HTTP/1.1\r\nHost: localhost\r\n\r\n"), peerIsLoopback: { true })) == 404)
        #expect(switched.withLock { $0 } == [1])
    }

    @Test("metrics and health: text format, 503 when stalled; a metrics-only server answers nothing else and checks no Host")
    func metrics() {
        let healthy = Atomic<Bool>(true)
        let metrics = MetricsRoutes(text: { "framekit_frames_total 5\n" }, healthy: { healthy.load(ordering: .relaxed) })
        #expect(metrics.reply(to: "/other", head: false) == nil)
        var configuration = PreviewServer.Configuration()
        configuration.servesPages = false
        configuration.checksHost = false
        let routes = PreviewRoutes(configuration: configuration, metrics: metrics)
        let scrape = routes.reply(to: request("GET /metrics HTTP/1.1\r\nHost: 10.0.0.7:9100\r\n\r\n"), peerIsLoopback: { false })
        #expect(status(scrape) == 200 && body(scrape) == "framekit_frames_total 5\n")
        #expect(status(routes.reply(to: request("GET /healthz HTTP/1.1\r\nHost: pod\r\n\r\n"), peerIsLoopback: { false })) == 200)
        healthy.store(false, ordering: .relaxed)
        #expect(status(routes.reply(to: request("GET /healthz HTTP/1.1\r\nHost: pod\r\n\r\n"), peerIsLoopback: { false })) == 503)
        #expect(status(routes.reply(to: request("GET / HTTP/1.1\r\nHost: pod\r\n\r\n"), peerIsLoopback: { false })) == 404)
        #expect(status(routes.reply(to: request("GET /stream.mjpeg HTTP/1.1\r\nHost: pod\r\n\r\n"), peerIsLoopback: { false })) == 404)
    }
}
