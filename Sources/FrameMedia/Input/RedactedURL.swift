/// A stream's address as FrameKit prints it — in device names, summaries, metrics labels, batch
/// lines and errors: a password in it (`rtsp://admin:s3cret@camera/stream`) is replaced by `***`
/// (`rtsp://admin:***@camera/stream`; a user with no password, often a token, is hidden too),
/// and so is the value of every query parameter whose name suggests a secret
/// (`?user=admin&password=***&token=***`; see ``isSecretParameter(_:)``). Every address in
/// `text` is redacted, so a message quoting one is safe to print. The address FrameKit connects
/// to keeps its credentials; only what it shows loses them.
public func redactingCredentials(_ text: String) -> String {
    var result = ""
    var rest = text[...]
    while let schemeEnd = rest.range(of: "://") {
        result += rest[..<schemeEnd.upperBound]
        rest = rest[schemeEnd.upperBound...]
        // User-info runs to the authority's end (a password may hold a quote).
        let authorityEnd = rest.firstIndex { "/?#".contains($0) || $0.isWhitespace } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userinfo = rest[..<at]
            result += userinfo.firstIndex(of: ":").map { "\(userinfo[..<$0]):***" } ?? "***"
            rest = rest[at...]
        }
        // The query runs to a space or a quoting character (a message quotes the address).
        let end = rest.firstIndex { $0.isWhitespace || "\"'<>".contains($0) } ?? rest.endIndex
        guard let question = rest[..<end].firstIndex(of: "?") else { continue }
        result += rest[...question]
        let queryEnd = rest[question..<end].firstIndex(of: "#") ?? end
        let parameters = rest[rest.index(after: question)..<queryEnd].split(separator: "&", omittingEmptySubsequences: false)
        result += parameters.map { parameter -> String in
            guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
            // A value may itself be an address (a relay's `?src=rtsp://user:pw@cam/`).
            return isSecretParameter(parameter[..<equals])
                ? "\(parameter[...equals])***"
                : "\(parameter[...equals])\(redactingCredentials(String(parameter[parameter.index(after: equals)...])))"
        }.joined(separator: "&")
        rest = rest[queryEnd...]
    }
    return result + rest
}

/// Whether a query parameter's value is hidden when an address is printed: its name (any case)
/// holds `pass`, `pwd`, `token`, `key`, `secret`, `auth`, `sig`, `cred` or `session` — what
/// cameras and signed URLs carry (`password=`, `pwd=`, `api_key=`, `access_token=`,
/// `X-Amz-Signature=`, `X-Amz-Credential=`, `sessionid=`…). The other values stay: they tell
/// a fleet's streams apart in labels and lines (`?channel=1&subtype=0`), and two streams whose
/// addresses printed alike would share one metrics series.
public func isSecretParameter(_ name: Substring) -> Bool {
    let name = name.lowercased()
    return ["pass", "pwd", "token", "key", "secret", "auth", "sig", "cred", "session"].contains { name.contains($0) }
}
