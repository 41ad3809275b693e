/// A stream's address as FrameKit prints it — in device names, summaries, metrics labels, batch
/// lines and errors: a password in it (`rtsp://admin:s3cret@camera/stream`) is replaced by `***`
/// (`rtsp://admin:***@camera/stream`; a user with no password, often a token, is hidden too).
/// Every address in `text` is redacted, so a message quoting one is safe to print. The address
/// FrameKit connects to keeps its credentials; only what it shows loses them.
public func redactingCredentials(_ text: String) -> String {
    var result = ""
    var rest = text[...]
    while let schemeEnd = rest.range(of: "://") {
        result += rest[..<schemeEnd.upperBound]
        rest = rest[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { "/?#".contains($0) || $0.isWhitespace } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userinfo = rest[..<at]
            result += userinfo.firstIndex(of: ":").map { "\(userinfo[..<$0]):***" } ?? "***"
            rest = rest[at...]
        }
    }
    return result + rest
}
