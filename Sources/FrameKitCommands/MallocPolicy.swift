import FrameKit

/// glibc's allocator settings for a long-running `framekit` process: the mmap threshold fixed
/// at 64 KiB (`GlibcMalloc.fixMmapThreshold()` says why), for every command, not only those
/// that run a preview feed (which fixes it too). An explicit `MALLOC_MMAP_THRESHOLD_` in the
/// environment wins.
enum MallocPolicy {
    static func apply() { GlibcMalloc.fixMmapThreshold() }
}
