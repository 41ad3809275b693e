import Foundation

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
}
