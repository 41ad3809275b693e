/// The memory behind one or more ``PixelBuffer`` values.
///
/// Either owned (allocated here, freed in `deinit`) or borrowed (a driver's mmap buffer or a
/// pool slot), in which case `deinit` hands the memory back through `release`: a V4L2 buffer is
/// re-queued to the kernel the moment the last ``PixelBuffer`` referring to it goes away.
///
/// `@unchecked Sendable` is safe because the memory is written only (a) by the producer before
/// the storage is published, or (b) through `PixelBuffer`'s mutating accessors, which first
/// make the storage uniquely referenced (copy on write), so no two threads ever share memory
/// that one of them writes. The address is FrameKit's own (`package`): a program reaches the
/// pixels through `PixelBuffer`'s accessors, which keep (b). Memory a program lends with
/// ``init(borrowing:byteCount:release:)`` it must not write until `release` is called.
/// `release` runs exactly once, from `deinit`.
public final class PixelStorage: @unchecked Sendable {
    @usableFromInline package let baseAddress: UnsafeMutableRawPointer
    public let byteCount: Int
    @usableFromInline let release: (@Sendable (UnsafeMutableRawPointer) -> Void)?

    /// Allocates `byteCount` zeroed bytes, 64-byte aligned for SIMD loads.
    public init(byteCount: Int) {
        precondition(byteCount >= 0, "negative byte count")
        self.baseAddress = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: 64)
        self.baseAddress.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        self.byteCount = byteCount
        self.release = nil
    }

    /// Wraps memory owned elsewhere (zero copy); `release` is called once when the last reference
    /// ends, and until then the owner must not write the memory.
    public init(
        borrowing baseAddress: UnsafeMutableRawPointer, byteCount: Int,
        release: @escaping @Sendable (UnsafeMutableRawPointer) -> Void
    ) {
        self.baseAddress = baseAddress
        self.byteCount = byteCount
        self.release = release
    }

    /// Whether this storage borrows memory owned by someone else (a driver or a pool).
    public var isBorrowed: Bool { release != nil }

    deinit {
        if let release {
            release(baseAddress)
        } else {
            baseAddress.deallocate()
        }
    }
}
