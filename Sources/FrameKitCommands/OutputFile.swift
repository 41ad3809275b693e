import Foundation
import FrameKit
import Synchronization

/// Files the CLI writes (stats, reports, photos): complete or absent, never half-written, and
/// never put over an existing file unless that is the documented behaviour.
///
/// The bytes go to a temporary file in the destination's folder (created with O_EXCL), are
/// flushed with fsync, and then take the final name: `rename` where replacing is allowed,
/// `link` + `unlink` where it is not (`link` fails with EEXIST if the name was taken in the
/// meantime: the no-clobber check is the kernel's, not a check-then-create race).
enum OutputFile {
    struct Failure: Error, CustomStringConvertible {
        var path: String
        var reason: String
        /// 73 (EX_CANTCREAT) when the file could not be created at all, 74 (EX_IOERR) when
        /// writing it failed (a full disk).
        var exitCode: Int32 = ExitCode.cannotCreate
        var description: String { "cannot write \(path): \(reason)" }
    }

    /// Checks, before any work is done, that `path` can be written: its folder exists and is
    /// writable, (unless `replacing`) nothing is there yet, and it is none of `inputs` — by
    /// device and inode, so `./../dir/clip.mp4` or a hard link to the input is found too
    /// (`detect --input clip.mp4 --stats clip.mp4` would replace the video with JSON).
    static func check(_ path: String, replacing: Bool, inputs: [String] = []) throws(Failure) {
        var output = stat()
        if stat(path, &output) == 0 {
            for input in inputs {
                var info = stat()
                if stat(input, &info) == 0, info.st_dev == output.st_dev, info.st_ino == output.st_ino {
                    throw Failure(path: path, reason: "it is this run's input \(input); not overwriting it")
                }
            }
        }
        try check(path, replacing: replacing)
    }

    private static func check(_ path: String, replacing: Bool) throws(Failure) {
        guard !path.isEmpty else { throw Failure(path: "''", reason: "an empty file name") }
        let url = URL(fileURLWithPath: path)
        // The bytes go to a hidden temporary name first (".NAME.partial-PID-N"): a name that
        // leaves no room for it would fail only at the end of the run.
        let name = url.lastPathComponent.utf8.count
        guard name <= Self.longestName else {
            throw Failure(
                path: path, reason: "the file name is \(name) bytes long; at most \(Self.longestName) (its temporary name adds to it)")
        }
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw Failure(path: path, reason: "no such folder \(folder)")
        }
        guard access(folder, W_OK) == 0 else { throw Failure(path: path, reason: "the folder \(folder) is not writable") }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard replacing else { throw Failure(path: path, reason: "it exists; not overwriting it") }
            guard (info.st_mode & S_IFMT) == S_IFREG else { throw Failure(path: path, reason: "it exists and is not a regular file") }
        }
    }

    /// The longest file name an output may have: NAME_MAX (255) less its temporary name's
    /// additions (".", ".partial-", a pid and a 32-bit number).
    static let longestName = 255 - 32

    /// Writes `bytes` to `path` atomically (see the type's comment).
    static func write(_ bytes: some Collection<UInt8>, to path: String, replacing: Bool) throws(Failure) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).partial-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(path: path, reason: String(cString: strerror(errno))) }
        var failure = writeAll(fd, Array(bytes))
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        if close(fd) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw Failure(path: path, reason: failure, exitCode: ExitCode.ioError)
        }
        if failure == nil {
            if replacing {
                if rename(temporary, path) != 0 { failure = String(cString: strerror(errno)) }
            } else if link(temporary, path) != 0 {
                failure = errno == EEXIST ? "it exists; not overwriting it" : String(cString: strerror(errno))
            }
        }
        unlink(temporary) // after rename it is already gone; after link, the final name remains
        if let failure { throw Failure(path: path, reason: failure) }
    }

    static func write(_ text: String, to path: String, replacing: Bool) throws(Failure) {
        try write(Array(text.utf8), to: path, replacing: replacing)
    }
}

/// A file written as it goes — detect's annotated stream, a batch input's JSON lines — that
/// takes its name only when complete: the bytes go to a hidden temporary name in the same
/// folder and ``commit()`` flushes and renames (or links, never over an existing file);
/// ``abandon()``, or a failed write, removes it. Its calls are serialised by its own lock, so a
/// delegate queue may append while another thread decides its fate; calls after the first
/// `commit()` or `abandon()` do nothing (an append then returns false).
final class PartialFile: Sendable {
    let path: String
    private let temporary: String
    private let replacing: Bool
    private struct State {
        var fd: Int32
        var failure: String?
        var closed = false
    }
    private let state: Mutex<State>

    /// Why a write failed (nil while none has).
    var failure: String? { state.withLock { $0.failure } }

    /// The hidden prefix of every temporary name for `path` (stale ones are found by it).
    static func temporaryPrefix(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).partial-").path
    }

    init(path: String, replacing: Bool) throws(OutputFile.Failure) {
        self.path = path
        self.replacing = replacing
        let temporary = Self.temporaryPrefix(for: path) + "\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        self.temporary = temporary
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputFile.Failure(path: path, reason: String(cString: strerror(errno))) }
        state = Mutex(State(fd: fd))
    }

    /// Appends `bytes`; false once a write has failed (the file will not be committed).
    @discardableResult
    func append(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            guard !s.closed, s.failure == nil else { return false }
            s.failure = writeAll(s.fd, bytes)
            return s.failure == nil
        }
    }

    /// Flushes and gives the file its name; throws (and removes it) if any write failed.
    func commit() throws(OutputFile.Failure) {
        let (failure, code) = state.withLock { s -> (String?, Int32) in
            guard !s.closed else { return ("already closed", ExitCode.ioError) }
            s.closed = true
            if s.failure == nil, fsync(s.fd) != 0 { s.failure = String(cString: strerror(errno)) }
            close(s.fd)
            var code = ExitCode.ioError
            if s.failure == nil {
                if replacing {
                    if rename(temporary, path) != 0 { s.failure = String(cString: strerror(errno)) }
                } else if link(temporary, path) != 0 {
                    code = ExitCode.cannotCreate
                    s.failure = errno == EEXIST ? "it exists; not overwriting it" : String(cString: strerror(errno))
                }
            }
            unlink(temporary)
            return (s.failure, code)
        }
        if let failure { throw OutputFile.Failure(path: path, reason: failure, exitCode: code) }
    }

    /// Removes the file: it never takes its name.
    func abandon() {
        state.withLock { s in
            guard !s.closed else { return }
            s.closed = true
            close(s.fd)
            unlink(temporary)
        }
    }
}

/// Writes every byte to `fd` through FrameKit's one syscall door (`retryingSystemCall`: EINTR
/// retried), and short writes again: the CLI's write(2) for stdout, stderr and output files.
/// Returns the error's text, or nil when all was written.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> String? {
    bytes.withUnsafeBytes { raw -> String? in
        var offset = 0
        while offset < raw.count {
            let start = offset
            do throws(SystemCallError) {
                offset += try retryingSystemCall("write") { (write(fd, raw.baseAddress! + start, raw.count - start), errno) }
            } catch {
                return String(cString: strerror(error.errno))
            }
        }
        return nil
    }
}
