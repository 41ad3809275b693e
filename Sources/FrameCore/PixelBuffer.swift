import Synchronization

/// An image in memory: one to three planes of pixels in a ``PixelFormat``.
///
/// A value type with copy-on-write storage. Buffers delivered by a capture output usually
/// *borrow* a driver or pool buffer: holding on to them keeps that buffer from the camera
/// (frames then drop as `outOfBuffers`). Call ``copy()`` to keep pixels for longer.
public struct PixelBuffer: Sendable {
    /// One plane: its size in pixels (or chroma samples) and where its rows are.
    public struct Plane: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var bytesPerRow: Int
        /// Bytes from the storage's base address to the plane's first row.
        public var offset: Int
        public var bytesPerPixel: Int
        /// Bytes the plane spans in storage (the last row need not be padded).
        @inlinable public var byteSpan: Int { height == 0 ? 0 : (height - 1) * bytesPerRow + width * bytesPerPixel }
    }

    public let width: Int
    public let height: Int
    public let format: PixelFormat
    // Up to three planes held inline, so a buffer costs no array allocation per frame.
    @usableFromInline var plane0: Plane
    @usableFromInline var plane1: Plane
    @usableFromInline var plane2: Plane
    @usableFromInline var storage: PixelStorage

    /// A new, zeroed, tightly packed buffer.
    public init(width: Int, height: Int, format: PixelFormat) throws(PixelBufferError) {
        try Self.validate(width: width, height: height, format: format)
        let layout = Self.packedLayout(width: width, height: height, format: format)
        self.init(unchecked: width, height, format, layout.planes, PixelStorage(byteCount: layout.byteCount))
    }

    /// Wraps `storage` with explicit plane rows (`bytesPerRow` per plane, planes back to back
    /// from `offset`s). Throws when a stride is too small or the storage cannot hold the layout.
    public init(
        width: Int, height: Int, format: PixelFormat, storage: PixelStorage,
        planes descriptors: [(offset: Int, bytesPerRow: Int)]
    ) throws(PixelBufferError) {
        try Self.validate(width: width, height: height, format: format)
        guard descriptors.count == format.planeCount else {
            throw .sizeMismatch(expected: "\(format.planeCount) planes", actual: "\(descriptors.count)")
        }
        var planes: [Plane] = []
        for (index, d) in descriptors.enumerated() {
            let g = format.planeGeometry(index, width: width, height: height)
            guard d.bytesPerRow >= g.width * g.bytesPerPixel else {
                throw .invalidBytesPerRow(plane: index, bytesPerRow: d.bytesPerRow, minimum: g.width * g.bytesPerPixel)
            }
            let plane = Plane(
                width: g.width, height: g.height, bytesPerRow: d.bytesPerRow, offset: d.offset,
                bytesPerPixel: g.bytesPerPixel)
            guard d.offset >= 0, d.offset + plane.byteSpan <= storage.byteCount else {
                throw .storageTooSmall(needed: d.offset + plane.byteSpan, available: storage.byteCount)
            }
            planes.append(plane)
        }
        self.init(unchecked: width, height, format, planes, storage)
    }

    /// Wraps `storage` laid out as a tightly packed image (what ``packedLayout(width:height:format:)`` gives).
    public init(width: Int, height: Int, format: PixelFormat, packedStorage storage: PixelStorage) throws(PixelBufferError) {
        try Self.validate(width: width, height: height, format: format)
        let layout = Self.packedLayout(width: width, height: height, format: format)
        guard layout.byteCount <= storage.byteCount else {
            throw .storageTooSmall(needed: layout.byteCount, available: storage.byteCount)
        }
        self.init(unchecked: width, height, format, layout.planes, storage)
    }

    @usableFromInline
    init(unchecked width: Int, _ height: Int, _ format: PixelFormat, _ planes: [Plane], _ storage: PixelStorage) {
        let empty = Plane(width: 0, height: 0, bytesPerRow: 0, offset: 0, bytesPerPixel: 0)
        self.width = width
        self.height = height
        self.format = format
        self.plane0 = planes[0]
        self.plane1 = planes.count > 1 ? planes[1] : empty
        self.plane2 = planes.count > 2 ? planes[2] : empty
        self.storage = storage
    }

    package static func validate(width: Int, height: Int, format: PixelFormat) throws(PixelBufferError) {
        let a = format.sizeAlignment
        guard width > 0, height > 0, width % a.width == 0, height % a.height == 0,
            width <= 16384, height <= 16384
        else {
            throw .invalidSize(width: width, height: height, format: format)
        }
        let budget = pixelBudget
        guard width * height <= budget else { throw .exceedsPixelBudget(width: width, height: height, budget: budget) }
    }

    private static let budget = Atomic<Int>(7680 * 4320)

    /// The most pixels one buffer may have: every buffer FrameKit makes (a decoded JPEG, a
    /// file source's pool, a conversion) is checked against it before memory is allocated, so
    /// a forged header claiming 16384x16384 is an error in microseconds, not 800 MB. Default:
    /// the largest preset, 8K (7680x4320). Process-wide.
    public static var pixelBudget: Int {
        get { budget.load(ordering: .relaxed) }
        set { budget.store(max(1, newValue), ordering: .relaxed) }
    }

    /// Planes back to back with no row padding, and the total byte count.
    public static func packedLayout(width: Int, height: Int, format: PixelFormat) -> (planes: [Plane], byteCount: Int) {
        var offset = 0
        var planes: [Plane] = []
        for index in 0..<format.planeCount {
            let g = format.planeGeometry(index, width: width, height: height)
            planes.append(
                Plane(
                    width: g.width, height: g.height, bytesPerRow: g.width * g.bytesPerPixel,
                    offset: offset, bytesPerPixel: g.bytesPerPixel))
            offset += g.width * g.bytesPerPixel * g.height
        }
        return (planes, offset)
    }

    @inlinable public var planeCount: Int { format.planeCount }

    @usableFromInline static let noPlane = Plane(width: 0, height: 0, bytesPerRow: 0, offset: 0, bytesPerPixel: 0)

    /// Plane `index`'s geometry. An index the format does not have (plane 1 of a GRAY8 buffer)
    /// is an empty plane — no width, height or bytes — as CVPixelBuffer answers, never a trap.
    @inlinable public func plane(_ index: Int) -> Plane {
        switch index {
        case 0: return plane0
        case 1: return plane1 // empty where the format has one plane (see init(unchecked:))
        case 2: return plane2
        default: return Self.noPlane
        }
    }

    /// Whether the pixels borrow a driver or pool buffer (see the type's discussion).
    public var isBorrowed: Bool { storage.isBorrowed }

    /// Total bytes the planes occupy in storage.
    public var byteCount: Int { (0..<planeCount).reduce(0) { $0 + plane($1).byteSpan } }

    /// Reads plane `index`: the buffer spans `byteSpan` bytes from the plane's first row.
    @inlinable
    public func withUnsafeBytes<R, E: Error>(ofPlane index: Int, _ body: (UnsafeRawBufferPointer, Plane) throws(E) -> R) throws(E) -> R {
        let p = plane(index)
        return try body(UnsafeRawBufferPointer(start: storage.baseAddress + p.offset, count: p.byteSpan), p)
    }

    /// Writes plane `index`, copying the storage first if another buffer shares it.
    @inlinable
    public mutating func withUnsafeMutableBytes<R, E: Error>(
        ofPlane index: Int, _ body: (UnsafeMutableRawBufferPointer, Plane) throws(E) -> R
    ) throws(E) -> R {
        makeUnique()
        let p = plane(index)
        return try body(UnsafeMutableRawBufferPointer(start: storage.baseAddress + p.offset, count: p.byteSpan), p)
    }

    /// Writes every plane at once (for conversions that fill luma and chroma rows together):
    /// `body` gets each plane's first byte and layout, in plane order. The planes of buffers
    /// FrameKit allocates never overlap; a buffer wrapped around storage with explicit plane
    /// offsets gets whatever those offsets say.
    @inlinable
    public mutating func withUnsafeMutablePlanes<R, E: Error>(
        _ body: ([(base: UnsafeMutableRawPointer, plane: Plane)]) throws(E) -> R
    ) throws(E) -> R {
        makeUnique()
        let planes = (0..<planeCount).map { (base: storage.baseAddress + plane($0).offset, plane: plane($0)) }
        return try body(planes)
    }

    @inlinable
    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&storage) { self = copy() }
    }

    /// A tightly packed copy in owned memory: keeps no driver or pool buffer alive.
    public func copy() -> PixelBuffer {
        let layout = Self.packedLayout(width: width, height: height, format: format)
        let destination = PixelStorage(byteCount: layout.byteCount)
        for index in 0..<planeCount {
            let src = plane(index)
            let dst = layout.planes[index]
            let rowBytes = src.width * src.bytesPerPixel
            for row in 0..<src.height {
                (destination.baseAddress + dst.offset + row * dst.bytesPerRow)
                    .copyMemory(from: storage.baseAddress + src.offset + row * src.bytesPerRow, byteCount: rowBytes)
            }
        }
        return PixelBuffer(unchecked: width, height, format, layout.planes, destination)
    }

    /// The pixels of every plane, row by row without padding (for tests, hashing, files).
    public func packedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        for index in 0..<planeCount {
            withUnsafeBytes(ofPlane: index) { bytes, p in
                for row in 0..<p.height {
                    let start = row * p.bytesPerRow
                    out.append(contentsOf: bytes[start..<start + p.width * p.bytesPerPixel])
                }
            }
        }
        return out
    }

    /// A buffer of this size and format holding `bytes` (tightly packed, every plane in order).
    public init(width: Int, height: Int, format: PixelFormat, packedBytes bytes: [UInt8]) throws(PixelBufferError) {
        try self.init(width: width, height: height, format: format)
        guard bytes.count == format.byteCount(width: width, height: height) else {
            throw .sizeMismatch(expected: "\(format.byteCount(width: width, height: height)) bytes", actual: "\(bytes.count) bytes")
        }
        bytes.withUnsafeBytes { storage.baseAddress.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    }
}
