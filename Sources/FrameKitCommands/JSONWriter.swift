import Foundation
import Synchronization

/// Writes to stdout and stderr through write(2): no Foundation call that traps when the
/// stream is closed, full or its reader gone (SIGPIPE is ignored at start-up, so a vanished
/// reader is EPIPE here). The first failure on stdout is remembered; commands end their run on
/// it, still write their files, and exit 74.
enum Console {
    private static let failure = Mutex<String?>(nil)
    /// One line at a time: several cameras' threads print at once, and a long line may take
    /// more than one write(2).
    private static let stdoutLines = Mutex(())

    /// Why stdout failed, if it did.
    static var outputFailure: String? { failure.withLock { $0 } }

    /// Writes one line to stdout; false (and remembered) if it could not be written.
    @discardableResult
    static func out(_ line: String) -> Bool {
        guard outputFailure == nil else { return false }
        if let error = stdoutLines.withLock({ _ in write(1, line + "\n") }) {
            failure.withLock { $0 = $0 ?? error }
            return false
        }
        return true
    }

    /// Writes one line to stderr (a failure there has nowhere to be reported: ignored).
    static func err(_ line: String) { _ = write(2, line + "\n") }

    /// Raw text to stderr (the terminal progress line).
    static func errRaw(_ text: String) { _ = write(2, text) }

    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// Ignores SIGPIPE: a closed pipe becomes EPIPE, handled where the write is.
    static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }

    private static func write(_ fd: Int32, _ text: String) -> String? { writeAll(fd, Array(text.utf8)) }
}
