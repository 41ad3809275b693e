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
            "HTTP/1.1 \(code) \(reason)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\(extra)Connection: close\r\n\r\n"
        return Array(header.utf8) + (head ? [] : body)
    }
}
