import Foundation
import FrameKit
import Synchronization

/// `--metrics HOST:PORT` (detect, preview): Prometheus text at /metrics and a health check at
/// /healthz for a long-running process, on a server of its own (loopback unless told
/// otherwise; read-only, so scrapers' `Host` is not checked).
final class MetricsEndpoint: Sendable {
    static let option = Option.text(
        "metrics", "HOST:PORT",
        help:
            "Serve Prometheus metrics at http://HOST:PORT/metrics and a health check at /healthz (200 while frames arrive, 503 once a source has stalled 5 s); HOST defaults to 127.0.0.1."
    )

    private let server: PreviewServer
    private let sources = Mutex<[MetricsSource]>([])
    private let extra = Mutex<[@Sendable () -> [String]]>([])
    private let started = Timestamp.now()

    private init(server: PreviewServer) { self.server = server }

    /// The endpoint `--metrics` asks for, serving; nil without the option.
    static func start(_ options: ParsedOptions) throws -> MetricsEndpoint? {
        guard let text = options[option] else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let host = parts.count == 2 && !parts[0].isEmpty ? String(parts[0]) : "127.0.0.1"
        guard let port = UInt16(parts.last ?? ""), parts.count <= 2 else {
            throw UsageError("--metrics takes HOST:PORT or PORT (e.g. 127.0.0.1:9100), got '\(text)'")
        }
        var configuration = PreviewServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.servesPages = false
        configuration.checksHost = false
        let endpoint = MetricsEndpoint(server: PreviewServer(configuration: configuration))
        endpoint.server.offerMetrics(
            text: { [weak endpoint] in
                let lines = endpoint?.extra.withLock { $0 }.flatMap { $0() } ?? []
                return PrometheusText.render(endpoint?.sources.withLock { $0 } ?? []) + lines.map { $0 + "\n" }.joined()
            },
            healthy: { [weak endpoint] in
                guard let endpoint else { return false }
                return PrometheusText.isHealthy(endpoint.sources.withLock { $0 }, started: endpoint.started)
            })
        do { try endpoint.server.start() } catch { throw RuntimeFailure("--metrics \(text): \(error)", exitCode: ExitCode.unavailable) }
        Console.err("framekit: metrics at http://\(host):\(endpoint.server.port)/metrics")
        return endpoint
    }

    func add(_ source: MetricsSource) { sources.withLock { $0.append(source) } }
    /// More families (whole lines, `# HELP`/`# TYPE` included) after the sources'.
    func addLines(_ lines: @escaping @Sendable () -> [String]) { extra.withLock { $0.append(lines) } }
    func remove(_ name: String) { sources.withLock { $0.removeAll { $0.name == name } } }
    func stop() { server.stop() }
}
