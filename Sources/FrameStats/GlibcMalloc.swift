import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// glibc's allocator controls that the Glibc module's headers leave out (malloc.h), looked up
/// by name once: nil where the C library has no such function.
package enum GlibcMalloc {
    /// `malloc_trim(pad)`: gives the heap's free memory back to the kernel.
    package static let trim: (@convention(c) (Int) -> Int32)? = function("malloc_trim")
    /// `mallopt(parameter, value)`.
    package static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = function("mallopt")
    /// malloc.h's `M_MMAP_THRESHOLD`, for ``mallopt``.
    package static let mmapThreshold: Int32 = -3

    /// Fixes glibc's mmap threshold at 64 KiB for the rest of the process, unless
    /// `MALLOC_MMAP_THRESHOLD_` in the environment already sets one (once per process).
    /// By default glibc raises the threshold each time a large block is freed (up to 32 MB), so
    /// after the first frames every per-frame buffer of a few hundred kilobytes comes from the
    /// heap, and buffers of changing sizes and lifetimes, freed on other threads, fragment it:
    /// the preview grew ~12 MB a minute with no client (#29). With the threshold fixed such
    /// blocks get mappings of their own, given back when freed: flat over an hour.
    package static func fixMmapThreshold() { _ = fixOnce }

    /// Whether ``fixMmapThreshold()`` has fixed the threshold in this process (read without
    /// fixing it).
    package static var isMmapThresholdFixed: Bool { thresholdFixed.load(ordering: .relaxed) }

    private static let thresholdFixed = Atomic(false)
    private static let fixOnce: Void = {
        guard getenv("MALLOC_MMAP_THRESHOLD_") == nil, let mallopt else { return }
        thresholdFixed.store(mallopt(mmapThreshold, 64 * 1024) == 1, ordering: .relaxed)
    }()

    private static func function<Function>(_ name: String) -> Function? {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, name) else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }
}
