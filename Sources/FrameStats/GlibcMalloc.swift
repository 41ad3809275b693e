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

    private static func function<Function>(_ name: String) -> Function? {
        guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, name) else { return nil }
        return unsafeBitCast(symbol, to: Function.self)
    }
}
