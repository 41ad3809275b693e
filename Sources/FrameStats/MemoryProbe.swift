import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Process memory as the kernel reports it (/proc/self/status).
public enum MemoryProbe {
    /// Resident set size now and at its peak (VmRSS, VmHWM), in bytes; nil where /proc is absent.
    public static func residentSet() -> (current: Int, peak: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        var current = 0
        var peak = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2, let kib = Int(fields[1]) else { continue }
            if fields[0] == "VmRSS:" { current = kib * 1024 }
            if fields[0] == "VmHWM:" { peak = kib * 1024 }
        }
        return (current, peak)
    }

    /// Starts a new peak: gives freed heap back to the kernel (`malloc_trim`), then resets the
    /// kernel's high-water mark to the current RSS (`5` to /proc/self/clear_refs, Linux ≥ 4.0),
    /// so the next ``residentSet()`` peak is this stretch's, not the process's. Returns false
    /// where the kernel does not allow it (the peak is then the process's).
    @discardableResult
    public static func startNewPeak() -> Bool {
        _ = GlibcMalloc.trim?(0)
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }
}
