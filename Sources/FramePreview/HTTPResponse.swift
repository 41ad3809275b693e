/// What the preview answers: status lines and headers, built the same way for every route.
enum HTTPResponse {
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 408: "Request Timeout"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }

    /// A whole response: status line, the headers every answer carries (no caching, no MIME
    /// sniffing, close after), `extra` headers, and the body unless `head` (a HEAD request).
    static func make(_ code: Int, _ reason: String, _ type: String, _ body: [UInt8], head: Bool, extra: String = "") -> [UInt8] {
        let header =
            "HTTP/1.1 \(code) \(reason)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n\(everyAnswer)\(extra)Connection: close\r\n\r\n"
        return Array(header.utf8) + (head ? [] : body)
    }

    /// The head of a stream's 200 (no length: it runs until either side closes), with the
    /// headers every answer carries.
    static func streamHead(_ type: String) -> [UInt8] {
        Array("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\n\(everyAnswer)Connection: close\r\n\r\n".utf8)
    }

    /// No caching, no MIME sniffing.
    private static let everyAnswer = "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
}
