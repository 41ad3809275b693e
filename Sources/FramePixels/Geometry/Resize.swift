import FrameCore
import FramePixelKernels

/// Resampling of 8-bit planes.
public enum Resize {
    /// Area-average resample of plane `plane` of `source` (1 byte per sample) into the 1-plane
    /// `destination` (gray8): each output pixel is the mean of the source area it covers, as
    /// OpenCV's `INTER_AREA` for down-scaling.
    public static func area(_ source: PixelBuffer, into destination: inout PixelBuffer, plane: Int = 0) throws(PixelBufferError) {
        try area(source, into: &destination, plane: plane, order: nil)
    }

    /// Which pass of a fractional area resize goes first: `nil` for the faster one on the
    /// build that runs. Tests force each to show they give the same bytes.
    package enum AreaOrder: Sendable {
        case verticalFirst, horizontalFirst
    }

    package static func area(
        _ source: PixelBuffer, into destination: inout PixelBuffer, plane: Int, order: AreaOrder?
    ) throws(PixelBufferError) {
        let sp = source.plane(plane)
        guard sp.bytesPerPixel == 1, destination.format == .gray8 else {
            throw .unsupportedFormat(destination.format, operation: "area resize (8-bit single-channel planes)")
        }
        let dw = destination.width
        let dh = destination.height
        guard dw <= sp.width, dh <= sp.height else {
            throw .sizeMismatch(expected: "at most \(sp.width)x\(sp.height) (area resize shrinks)", actual: "\(dw)x\(dh)")
        }
        if sp.width % dw == 0 && sp.height % dh == 0 && sp.width / dw == sp.height / dh {
            return areaInteger(source, plane: plane, into: &destination, factor: sp.width / dw)
        }
        // Exactly 3/8 each way on the AVX2 build: eighths of pixels, summed in registers
        // (`ThreeEighthRows`), the same integers as the general passes below.
        if order == nil && KernelDispatch.path == .avx2 && 8 * dw == 3 * sp.width && 8 * dh == 3 * sp.height {
            return threeEighths(source, plane: plane, into: &destination)
        }
        // Separable, in fixed point: each axis's weights at 12 bits summing to exactly 4096, so a
        // whole-pixel sum is at most 255·2^24 and fits 32 bits. The sums are exact, so the order
        // of the passes does not change a byte; the faster order is taken for the build that runs.
        let xTaps = areaAxes.plan(source: sp.width, destination: dw) { FixedTaps(taps(source: sp.width, destination: dw)) }
        let yTaps = areaAxes.plan(source: sp.height, destination: dh) { FixedTaps(taps(source: sp.height, destination: dh)) }
        if order == .horizontalFirst || (order == nil && KernelDispatch.path == .avx2) {
            let horizontal = areaPasses.plan(source: sp.width, destination: dw) {
                KernelDispatch.Taps(
                    first: xTaps.first.map { Int32($0) }, weights: xTaps.evenWeights, taps: xTaps.evenWidth, sourceWidth: sp.width,
                    channels: 1)
            }
            // Only where the shuffles cover (nearly) the whole row: gathered one by one, the
            // horizontal pass is cheaper on the fewer output rows.
            if order == .horizontalFirst || (horizontal.shuffled > 0 && horizontal.shuffled + 32 >= dw) {
                return areaHorizontalFirst(source, plane: plane, into: &destination, horizontal: horizontal, yTaps: yTaps)
            }
        }
        // Vertical first: every source byte times one weight, added into a row (what the
        // compiler vectorises); each output pixel then sums its few horizontal taps, read
        // from fixed-width slots.
        var rowSums = [UInt32](repeating: 0, count: sp.width + xTaps.width)
        source.withUnsafeBytes(ofPlane: plane) { src, _ in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                rowSums.withUnsafeMutableBufferPointer { sums in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let sum = sums.baseAddress!
                    let (n, m, width) = (xTaps.width, yTaps.width, sp.width)
                    for dy in 0..<dh {
                        sum.update(repeating: 0, count: width)
                        for k in 0..<m {
                            let wy = yTaps.weights[dy &* m &+ k]
                            if wy == 0 { continue }
                            let row = s + (yTaps.first[dy] &+ k) &* sp.bytesPerRow
                            for i in 0..<width { sum[i] &+= UInt32(row[i]) &* wy }
                        }
                        let out = d + dy &* dp.bytesPerRow
                        xTaps.weights.withUnsafeBufferPointer { weights in
                            for dx in 0..<dw {
                                let base = sum + xTaps.first[dx]
                                let w = weights.baseAddress! + dx &* n
                                var acc: UInt32 = 1 << 23
                                for k in 0..<n { acc &+= base[k] &* w[k] }
                                out[dx] = UInt8(truncatingIfNeeded: acc &>> 24)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Horizontal first, where the horizontal pass runs on shuffles (`HorizontalTaps`, the
    /// AVX2 build): each source row's sums once, into a ring of as many rows as an output row
    /// reads; each output row is then a vectorised weighted sum of those.
    static func areaHorizontalFirst(
        _ source: PixelBuffer, plane: Int, into destination: inout PixelBuffer, horizontal: KernelDispatch.Taps, yTaps: FixedTaps
    ) {
        let dw = destination.width
        let dh = destination.height
        let m = yTaps.width
        var ring = [Int32](repeating: 0, count: m * dw)
        var ringRows = [Int](repeating: -1, count: m)
        // Up to four rows an output row reads (the common case, factors above about 1/3) go
        // through one fused pass, more through the accumulator.
        var acc = [UInt32](repeating: 0, count: m <= 4 ? 0 : dw)
        let rows = UnsafeMutablePointer<UnsafePointer<Int32>>.allocate(capacity: 4)
        let weights = UnsafeMutablePointer<UInt32>.allocate(capacity: 4)
        defer {
            rows.deallocate()
            weights.deallocate()
        }
        source.withUnsafeBytes(ofPlane: plane) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                ring.withUnsafeMutableBufferPointer { ring in
                    acc.withUnsafeMutableBufferPointer { acc in
                        let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        for dy in 0..<dh {
                            var taps = 0
                            for k in 0..<m {
                                let wy = yTaps.weights[dy &* m &+ k]
                                if wy == 0 { continue }
                                // Rows first…first+m−1 fall in distinct slots, and a row leaves
                                // the ring only once no later output row reads it.
                                let row = yTaps.first[dy] &+ k
                                let slot = ring.baseAddress! + (row % m) &* dw
                                if ringRows[row % m] != row {
                                    horizontal.sums(s + row &* sp.bytesPerRow, into: slot)
                                    ringRows[row % m] = row
                                }
                                if m <= 4 {
                                    (rows[taps], weights[taps]) = (UnsafePointer(slot), wy)
                                } else {
                                    KernelDispatch.accumulate(slot, weight: wy, into: acc.baseAddress!, count: dw, start: taps == 0)
                                }
                                taps += 1
                            }
                            let out = d + dy &* dp.bytesPerRow
                            if m <= 4 {
                                KernelDispatch.weightedRows(rows, weights, taps: taps, into: out, count: dw)
                            } else {
                                KernelDispatch.finish(acc.baseAddress!, into: out, count: dw)
                            }
                        }
                    }
                }
            }
        }
    }

    static let areaAxes = ResizePlans<FixedTaps>()
    static let areaPasses = ResizePlans<KernelDispatch.Taps>()
    static let bilinearPasses = ResizePlans<KernelDispatch.Taps>()
    static let bilinearRows = ResizePlans<[(Int, Int, Int16)]>()

    /// An axis's taps in fixed point: output index `i` covers `width` source indices from
    /// `first[i]` with `weights[i * width ..< (i + 1) * width]`, 12-bit weights summing to exactly
    /// 4096, zeros padding the shorter lists. Each weight is the step between the rounded
    /// running sums, so none is off by more than 1 and none can go negative — giving the
    /// rounding remainder to the largest went below zero (and wrapped) when hundreds of taps'
    /// errors added up (a 3840-pixel row to 13).
    struct FixedTaps: Sendable {
        let first: [Int]
        let weights: [UInt32]
        let width: Int
        init(_ taps: [[(Int, Float)]]) {
            width = taps.map(\.count).max() ?? 1
            first = taps.map { $0.first?.0 ?? 0 }
            var w = [UInt32](repeating: 0, count: taps.count * width)
            for (i, list) in taps.enumerated() {
                var running = 0.0
                var previous: UInt32 = 0
                for (k, tap) in list.enumerated() {
                    running += Double(tap.1)
                    let next = k == list.count - 1 ? 4096 : UInt32(min(4096, max(Double(previous), (running * 4096).rounded())))
                    w[i * width + k] = next - previous
                    previous = next
                }
            }
            weights = w
        }

        /// The width rounded up to even, and the weights as 16-bit values at that width (zeros
        /// padding): what `HorizontalTaps` takes.
        var evenWidth: Int { width + width % 2 }
        var evenWeights: [Int16] {
            let e = evenWidth
            var out = [Int16](repeating: 0, count: first.count * e)
            for i in 0..<first.count {
                for k in 0..<width { out[i * e + k] = Int16(weights[i * width + k]) }
            }
            return out
        }
    }

    /// Exact halving: the rounded mean of each 2x2 block, channel by channel, for 1-, 3- and
    /// 4-byte pixels of plane `plane` (the area resize's 2x and the bilinear resize's exact half).
    static func halve(_ source: PixelBuffer, plane: Int, into destination: inout PixelBuffer) {
        let channels = source.plane(plane).bytesPerPixel
        let (dw, dh) = (destination.width, destination.height)
        // halvePixels' scratch: a row pair's sums, and the lanes its last load reads past them.
        var sums = [UInt16](repeating: 0, count: channels == 1 ? 0 : 2 * channels * dw + 4)
        source.withUnsafeBytes(ofPlane: plane) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                sums.withUnsafeMutableBufferPointer { scratch in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    if channels == 1 {
                        return KernelDispatch.halvePlane(
                            s, sourceStride: sp.bytesPerRow, into: d, outStride: dp.bytesPerRow, count: dw, rows: dh)
                    }
                    for y in 0..<dh {
                        let (r0, r1, out) = (s + 2 * y * sp.bytesPerRow, s + (2 * y + 1) * sp.bytesPerRow, d + y * dp.bytesPerRow)
                        KernelDispatch.halvePixels(r0, r1, into: out, count: dw, channels: channels, sums: scratch.baseAddress!)
                    }
                }
            }
        }
    }

    /// Exact k-times down-scaling: the rounded mean of each k x k block (OpenCV's fast path).
    static func areaInteger(_ source: PixelBuffer, plane: Int, into destination: inout PixelBuffer, factor k: Int) {
        if k == 2 { return halve(source, plane: plane, into: &destination) }
        let dw = destination.width
        let dh = destination.height
        let area = UInt32(k * k)
        let half = area / 2
        var sums = [UInt32](repeating: 0, count: dw)
        source.withUnsafeBytes(ofPlane: plane) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                sums.withUnsafeMutableBufferPointer { acc in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for dy in 0..<dh {
                        for i in 0..<dw { acc[i] = 0 }
                        for r in 0..<k {
                            let row = s + (dy * k + r) * sp.bytesPerRow
                            for dx in 0..<dw {
                                var t: UInt32 = 0
                                for c in 0..<k { t &+= UInt32(row[dx &* k &+ c]) }
                                acc[dx] &+= t
                            }
                        }
                        let out = d + dy * dp.bytesPerRow
                        for dx in 0..<dw { out[dx] = UInt8(truncatingIfNeeded: (acc[dx] &+ half) / area) }
                    }
                }
            }
        }
    }

    /// For each output index, the source indices it covers and their weights (summing to 1).
    static func taps(source: Int, destination: Int) -> [[(Int, Float)]] {
        let scale = Double(source) / Double(destination)
        return (0..<destination).map { d in
            let start = Double(d) * scale
            let end = start + scale
            var list: [(Int, Float)] = []
            var s = Int(start)
            while Double(s) < end - 1e-9, s < source {
                let overlap = min(end, Double(s + 1)) - max(start, Double(s))
                if overlap > 1e-9 { list.append((s, Float(overlap / scale))) }
                s += 1
            }
            return list
        }
    }
}

extension Resize {
    /// Bilinear resample of an interleaved 8-bit buffer (gray8, rgb24, bgra32) into
    /// `destination` of the same format (pixel centres aligned, as OpenCV's `INTER_LINEAR`).
    ///
    /// Separable, with OpenCV's arithmetic: each needed source row is interpolated horizontally
    /// once with 11-bit weights (kept as 16-bit values, the 32-bit sum >> 4), then output rows
    /// blend two of those rows with 16-bit high-half multiplies — what OpenCV's own SIMD path
    /// computes, within 1 LSB of interpolating each pixel from its four neighbours in 32 bits.
    public static func bilinear(_ source: PixelBuffer, into destination: inout PixelBuffer) throws(PixelBufferError) {
        guard source.planeCount == 1, source.format != .yuyv else {
            throw .unsupportedFormat(source.format, operation: "bilinear resize (GRAY8, RGB24, BGRA)")
        }
        guard source.format == destination.format else {
            throw .formatMismatch(source: source.format, destination: destination.format, operation: "bilinear resize (GRAY8, RGB24, BGRA)")
        }
        let channels = source.plane(0).bytesPerPixel
        let sw = source.width
        let sh = source.height
        let dw = destination.width
        let dh = destination.height
        // Exactly half each way: every output's taps are a 2x2 block weighted 1024 each, and the
        // fixed-point passes below give exactly the block's rounded mean — the 2x area kernel's
        // bytes, in one pass over the source (OpenCV switches to its area resize here too). A
        // 720p frame shrunk for a face detector's pass: ~5x faster than the passes below.
        if sw == 2 * dw && sh == 2 * dh { return halve(source, plane: 0, into: &destination) }
        // Exactly 3/4 each way (one channel): every output 1/6, 1/2 or 5/6 between source pixels
        // on each axis, summed exactly in sixths and rounded once (`ThreeQuarterRows`).
        if channels == 1 && 4 * dw == 3 * sw && 4 * dh == 3 * sh { return threeQuarters(source, into: &destination) }
        let fx = Double(sw) / Double(dw)
        let fy = Double(sh) / Double(dh)
        let horizontal = bilinearPasses.plan(source: sw, destination: dw, channels: channels) {
            // Per output column: the left source column and the weights of it and its right-hand
            // neighbour (2048 in all). At the right edge the pair is moved one left with all the
            // weight on the right, so that every pair lies inside the row.
            var lefts = [Int32](repeating: 0, count: dw)
            var weights = [Int16](repeating: 0, count: 2 * dw)
            for x in 0..<dw {
                let s = max(0, (Double(x) + 0.5) * fx - 0.5)
                var i = min(Int(s), sw - 1)
                var w = Int16(((s - Double(i)) * 2048).rounded())
                if i == sw - 1 { (i, w) = (max(sw - 2, 0), sw == 1 ? 0 : 2048) }
                lefts[x] = Int32(i)
                weights[2 * x] = 2048 - w
                weights[2 * x + 1] = w
            }
            return KernelDispatch.Taps(first: lefts, weights: weights, taps: 2, sourceWidth: sw, channels: channels)
        }
        // Per output row: its two source rows and the lower one's weight (of 2048).
        let vertical = bilinearRows.plan(source: sh, destination: dh) {
            (0..<dh).map { y -> (Int, Int, Int16) in
                let sy = max(0, (Double(y) + 0.5) * fy - 0.5)
                let y0 = min(Int(sy), sh - 1)
                let y1 = min(y0 + 1, sh - 1)
                return (y0, y1, y1 == y0 ? 0 : Int16(((sy - Double(y0)) * 2048).rounded()))
            }
        }
        let rowLength = dw * channels
        var cache = [Int16](repeating: 0, count: 2 * rowLength)
        var cachedRow = (-1, -1)
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                cache.withUnsafeMutableBufferPointer { rows in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for y in 0..<dh {
                        let (y0, y1, wy) = vertical[y]
                        // Two slots by row parity: consecutive output rows mostly share their source rows.
                        func prepare(_ sourceRow: Int) {
                            guard (sourceRow & 1 == 0 ? cachedRow.0 : cachedRow.1) != sourceRow else { return }
                            horizontal.sumsShifted(s + sourceRow * sp.bytesPerRow, into: rows.baseAddress! + (sourceRow & 1) * rowLength)
                            if sourceRow & 1 == 0 { cachedRow.0 = sourceRow } else { cachedRow.1 = sourceRow }
                        }
                        prepare(y0)
                        prepare(y1)
                        KernelDispatch.blend(
                            rows.baseAddress! + (y0 & 1) * rowLength, 2048 - wy,
                            rows.baseAddress! + (y1 & 1) * rowLength, wy,
                            into: d + y * dp.bytesPerRow, count: rowLength)
                    }
                }
            }
        }
    }

    /// Bilinear by exactly 3/4 of one channel: three output rows from each four source rows.
    static func threeQuarters(_ source: PixelBuffer, into destination: inout PixelBuffer) {
        let (dw, dh) = (destination.width, destination.height)
        var scratch = [UInt16](repeating: 0, count: FramePixelKernels.ThreeQuarterRows.scratchCount(dw))
        source.withUnsafeBytes(ofPlane: 0) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for k in 0..<(dh / 3) {
                        let r = s + 4 * k * sp.bytesPerRow
                        let o = d + 3 * k * dp.bytesPerRow
                        KernelDispatch.threeQuarters(
                            r, r + sp.bytesPerRow, r + 2 * sp.bytesPerRow, r + 3 * sp.bytesPerRow,
                            into: o, o + dp.bytesPerRow, o + 2 * dp.bytesPerRow, count: dw, scratch: scratch.baseAddress!)
                    }
                }
            }
        }
    }

    /// Area by exactly 3/8 of one 8-bit plane: three output rows from each eight source rows.
    static func threeEighths(_ source: PixelBuffer, plane: Int, into destination: inout PixelBuffer) {
        let (dw, dh) = (destination.width, destination.height)
        source.withUnsafeBytes(ofPlane: plane) { src, sp in
            destination.withUnsafeMutableBytes(ofPlane: 0) { dst, dp in
                let s = src.baseAddress!.assumingMemoryBound(to: UInt8.self)
                let d = dst.baseAddress!.assumingMemoryBound(to: UInt8.self)
                for k in 0..<(dh / 3) {
                    KernelDispatch.threeEighths(
                        s + 8 * k * sp.bytesPerRow, rowStride: sp.bytesPerRow, into: d + 3 * k * dp.bytesPerRow, outStride: dp.bytesPerRow,
                        count: dw)
                }
            }
        }
    }
}
