import Foundation
import FrameKit

/// glibc's allocator settings for a long-running `framekit` process. By default glibc raises
/// its mmap threshold each time a large block is freed (up to 32 MB), so after the first
/// frames every per-frame buffer of a few hundred kilobytes comes from the heap, and buffers of
/// changing sizes and lifetimes fragment it: the preview grew ~12 MB a minute with no client
/// (#29; flat with `MALLOC_MMAP_THRESHOLD_=65536`). A fixed threshold keeps such blocks in
/// their own mappings, given back when freed. An explicit `MALLOC_MMAP_THRESHOLD_` in the
/// environment wins. Applied by the executable only: a program linking FrameKit keeps its own.
enum MallocPolicy {
    /// Blocks from this size up are mapped on their own (what the issue measured flat with).
    static let mmapThreshold = 64 * 1024

    static func apply() {
        guard ProcessInfo.processInfo.environment["MALLOC_MMAP_THRESHOLD_"] == nil else { return }
        _ = GlibcMalloc.mallopt?(GlibcMalloc.mmapThreshold, Int32(mmapThreshold))
    }
}
