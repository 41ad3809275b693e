import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One batch input claimed in a shared output folder: an exclusive `flock` on a hidden
/// `.NAME.lock` beside its outputs, held while the input is processed. Two runs on one folder
/// (a shard started twice, a rerun beside a running job) then share the work instead of
/// processing an input twice and deleting each other's temporary files. The lock file is
/// removed by its holder before the lock is let go; a claimer that finds the file replaced
/// under it (removed and made again by another run) tries again, so two runs never both hold
/// one input.
final class InputClaim {
    private let path: String
    private let fd: Int32

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    enum Outcome {
        case claimed(InputClaim)
        /// Another process holds it now.
        case busy
        case failed(String)
    }

    /// Claims the input whose outputs start with `base` (the folder's path plus its name).
    static func claim(base: String) -> Outcome {
        let url = URL(fileURLWithPath: base)
        let path = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).lock").path
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return .failed("cannot create \(path): \(String(cString: strerror(errno)))") }
            var result: Int32
            repeat { result = flock(fd, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
            if result != 0 {
                let error = errno
                close(fd)
                return error == EWOULDBLOCK ? .busy : .failed("cannot lock \(path): \(String(cString: strerror(error)))")
            }
            // Held: but is it still the file at `path` (its holder may have removed it between
            // our open and our lock)? If not, the lock guards nothing: open it again.
            var held = stat()
            var named = stat()
            if fstat(fd, &held) == 0, stat(path, &named) == 0, held.st_dev == named.st_dev, held.st_ino == named.st_ino {
                return .claimed(InputClaim(path: path, fd: fd))
            }
            close(fd)
        }
    }

    /// Lets the input go: the lock file is removed first, then the lock released.
    func release() {
        unlink(path)
        close(fd)
    }
}
