/// An HTTP/1.x request head, parsed by a pure function over the bytes received so far (the
/// preview server's only parser; fuzzed by the tests).
struct HTTPRequest: Equatable {
    var method: String
    var target: String
    /// Header names lower-cased, in order.
    var headers: [(name: String, value: String)]

    static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.headers.map(\.name) == b.headers.map(\.name)
            && a.headers.map(\.value) == b.headers.map(\.value)
    }

    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    struct Limits: Sendable {
        /// The request line (method, target, version): longer is 414 URI Too Long.
        var requestLine = 8192
        /// One header line: longer is 431.
        var headerLine = 8192
        /// The whole head: more is 431.
        var head = 16384
        /// Header fields: more is 431.
        var headerCount = 64
    }

    enum Outcome: Equatable {
        /// More bytes are needed.
        case incomplete
        case request(HTTPRequest)
        /// The request is refused with this status (400, 414, 431, 505).
        case refused(status: Int, reason: String)
    }

    /// Parses the head in `bytes`. Lines end in CRLF or a bare LF (as nginx accepts); the head
    /// ends at the first empty line.
    static func parse(_ bytes: ArraySlice<UInt8>, limits: Limits = Limits()) -> Outcome {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var i = bytes.startIndex
        while i < bytes.endIndex {
            if bytes[i] == 10 { // LF
                var line = bytes[start..<i]
                if line.last == 13 { line = line.dropLast() }
                if line.isEmpty {
                    if lines.isEmpty {
                        start = i + 1
                        i += 1
                        continue
                    } // tolerate leading blank lines
                    return make(lines, limits: limits)
                }
                if let refusal = tooLong(line, index: lines.count, limits: limits) { return refusal }
                lines.append(line)
                if lines.count > limits.headerCount + 1 { return .refused(status: 431, reason: "too many header fields") }
                start = i + 1
            }
            i += 1
        }
        // No end yet: refuse as soon as what has come is already over a limit.
        if let refusal = tooLong(bytes[start..<bytes.endIndex], index: lines.count, limits: limits) { return refusal }
        if bytes.count > limits.head { return .refused(status: 431, reason: "request head too large") }
        return .incomplete
    }

    private static func tooLong(_ line: ArraySlice<UInt8>, index: Int, limits: Limits) -> Outcome? {
        if index == 0 && line.count > limits.requestLine { return .refused(status: 414, reason: "request line too long") }
        if index > 0 && line.count > limits.headerLine { return .refused(status: 431, reason: "header line too long") }
        return nil
    }

    private static func make(_ lines: [ArraySlice<UInt8>], limits: Limits) -> Outcome {
        guard lines.reduce(0, { $0 + $1.count + 2 }) <= limits.head else {
            return .refused(status: 431, reason: "request head too large")
        }
        let words = lines[0].split(separator: 32, omittingEmptySubsequences: false)
        guard words.count == 3, let method = token(words[0]), let target = text(words[1]), !target.isEmpty,
            let version = text(words[2])
        else {
            return .refused(status: 400, reason: "malformed request line")
        }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            return version.hasPrefix("HTTP/")
                ? .refused(status: 505, reason: "HTTP/1.0 or 1.1 only")
                : .refused(status: 400, reason: "malformed request line")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58), let name = token(line[line.startIndex..<colon]),
                let value = text(line[(colon + 1)...])
            else {
                return .refused(status: 400, reason: "malformed header field")
            }
            headers.append((name.lowercased(), value.trimmingSpaces()))
        }
        // Two Hosts could name two servers: RFC 9112 says 400.
        guard headers.filter({ $0.0 == "host" }).count <= 1 else { return .refused(status: 400, reason: "more than one Host") }
        // The absolute form (`GET http://host/path`, which servers must accept): its authority is
        // the Host (replacing the header, as RFC 9112 says), its path the target.
        var path = target
        let lowered = target.lowercased()
        if let scheme = ["http://", "https://"].first(where: { lowered.hasPrefix($0) }) {
            let rest = target.dropFirst(scheme.count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            guard !authority.isEmpty, !authority.contains("@") else { return .refused(status: 400, reason: "malformed request target") }
            let tail = rest.dropFirst(authority.count)
            path = tail.first == "/" ? String(tail) : "/" + tail
            headers.removeAll { $0.0 == "host" }
            headers.append(("host", String(authority)))
        }
        return .request(HTTPRequest(method: method, target: path, headers: headers))
    }

    /// An RFC 9110 token (method, header name): visible ASCII but separators.
    private static func token(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty, bytes.allSatisfy({ $0 > 32 && $0 < 127 && !"()<>@,;:\\\"/[]?={}".utf8.contains($0) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Field text: no control characters but tab.
    private static func text(_ bytes: ArraySlice<UInt8>) -> String? {
        guard bytes.allSatisfy({ $0 == 9 || ($0 >= 32 && $0 != 127) }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
