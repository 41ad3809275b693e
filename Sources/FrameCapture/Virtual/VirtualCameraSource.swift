import Foundation
import FrameCore
import FrameImageIO
import FramePixels

/// The built-in virtual camera: colour bars scrolling sideways with a real face photo drifting
/// smoothly across them, paced in real time and timestamped like a camera. Renders NV12
/// (video range) with row copies only, so it stays cheap at any size.
final class VirtualCameraSource: FrameSource {
    static let offeredSizes: [FrameSize] = [
        (320, 180), (352, 288), (640, 360), (640, 480), (960, 540), (1280, 720),
        (1920, 1080), (3840, 2160)
    ].map { FrameSize(width: $0.0, height: $0.1) }
    static let offeredRates: [Double] = [5, 10, 15, 24, 25, 30, 60]

    let configuration: SourceConfiguration
    let isRealTime = true
    private let pool: BufferPool
    private let width: Int, height: Int
    private let frameDuration: Double
    // Two pattern periods side by side, so any horizontal offset is one copy per row.
    private var backgroundLuma: [UInt8] = []
    private var backgroundChroma: [UInt8] = []
    private var face: PixelBuffer
    private var startInstant = Timestamp.now()
    private var tick: UInt64 = 0
    private var pending: [SourceEvent] = []
    private let controls: VirtualCameraControls
    private var changeCursor: Int
    private var applied = VirtualCameraControls.Settings()
    private var lumaTable = [UInt8](0...255)
    private var chromaTable = (cb: [UInt8](0...255), cr: [UInt8](0...255))
    private var zoomScratch: [UInt8] = []

    init(configuration: SourceConfiguration, controls: VirtualCameraControls) throws(CaptureError) {
        self.configuration = configuration
        self.controls = controls
        changeCursor = controls.changeCursor
        width = configuration.format.size.width
        height = configuration.format.size.height
        frameDuration = 1 / configuration.frameRate
        do {
            pool = try BufferPool(width: width, height: height, format: .nv12VideoRange, capacity: configuration.bufferCount)
            face = try Self.makeFace(frameHeight: height)
        } catch let error as PixelBufferError {
            throw .pixelBuffer(error)
        } catch {
            throw .configuration("virtual camera: \(error)")
        }
        renderBackground()
    }

    func usageReporter() -> @Sendable () -> BufferPool.Usage { { [pool] in pool.usage } }

    /// The embedded face photo, scaled to about 40% of the frame height, in NV12.
    static func makeFace(frameHeight: Int) throws -> PixelBuffer {
        guard let data = Data(base64Encoded: VirtualCameraFace.jpegBase64, options: .ignoreUnknownCharacters) else {
            throw CaptureError.configuration("virtual camera: embedded face image is damaged")
        }
        let photo = try JPEG.decode([UInt8](data), to: .rgb24)
        let h = max(24, Int(Double(frameHeight) * 0.4)) & ~1
        let w = max(2, Int(Double(photo.width) * Double(h) / Double(photo.height))) & ~1
        var scaled = try PixelBuffer(width: w, height: h, format: .rgb24)
        try Resize.bilinear(photo, into: &scaled)
        return try PixelFormatConversion.convert(scaled, to: .nv12VideoRange)
    }

    /// 75% colour bars (BT.601 video range) with a luma ramp along the bottom sixth.
    private func renderBackground() {
        let bars: [(y: UInt8, cb: UInt8, cr: UInt8)] = [
            (180, 128, 128), (162, 44, 142), (131, 156, 44), (112, 72, 58),
            (84, 184, 198), (65, 100, 212), (35, 212, 114), (16, 128, 128)
        ]
        let period = width
        let rampStart = height - height / 6
        backgroundLuma = [UInt8](repeating: 0, count: 2 * period * height)
        backgroundChroma = [UInt8](repeating: 128, count: 2 * period * height / 2)
        for row in 0..<height {
            for col in 0..<2 * period {
                let x = col % period
                let bar = bars[min(7, x * 8 / period)]
                backgroundLuma[row * 2 * period + col] = row >= rampStart ? UInt8(16 + x * 219 / period) : bar.y
                if row % 2 == 0 && col % 2 == 0 {
                    let c = (row / 2) * 2 * period + col
                    backgroundChroma[c] = row >= rampStart ? 128 : bar.cb
                    backgroundChroma[c + 1] = row >= rampStart ? 128 : bar.cr
                }
            }
        }
    }

    func start() throws(CaptureError) {
        startInstant = Timestamp.now()
        tick = 0
    }

    func next() throws(CaptureError) -> SourceEvent {
        let (changes, cursor) = controls.changes(since: changeCursor)
        changeCursor = cursor
        pending += changes.map { .notice(.deviceControlChanged($0)) }
        if !pending.isEmpty { return pending.removeFirst() }
        var due = startInstant.adding(seconds: Double(tick) * frameDuration)
        let now = Timestamp.now()
        // Fell more than a frame behind (the thread was starved of CPU): the missed ticks are
        // frames a camera would have lost upstream.
        if now.seconds(since: due) > frameDuration {
            let missed = UInt64(now.seconds(since: due) / frameDuration)
            for i in 0..<missed {
                pending.append(
                    .dropped(
                        DroppedFrame(
                            sequenceNumber: tick + i, presentationTime: Double(tick + i) * frameDuration,
                            reason: .discontinuity)))
            }
            tick += missed
            due = startInstant.adding(seconds: Double(tick) * frameDuration)
            return pending.removeFirst()
        }
        // Sleep in short steps so a stop request is seen quickly.
        if due.seconds(since: now) > 0.05 {
            Timestamp.sleep(until: now.adding(seconds: 0.05))
            return .idle
        }
        Timestamp.sleep(until: due)
        let sequence = tick
        tick += 1
        let time = Double(sequence) * frameDuration
        guard var buffer = pool.makeBuffer() else {
            return .dropped(DroppedFrame(sequenceNumber: sequence, presentationTime: time, reason: .outOfBuffers))
        }
        render(into: &buffer, time: time)
        applyControls(to: &buffer)
        return .frame(SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: sequence, captureInstant: due))
    }

    /// Where the face is at `time`: a smooth Lissajous path inside the frame.
    func faceOrigin(at time: Double) -> (x: Int, y: Int) {
        let fx = 0.5 + 0.45 * sin(2 * Double.pi * time / 6.0)
        let fy = 0.5 + 0.4 * sin(2 * Double.pi * time / 4.3)
        return (Int(Double(width - face.width) * fx) & ~1, Int(Double(height - face.height) * fy) & ~1)
    }

    private func render(into buffer: inout PixelBuffer, time: Double) {
        let shift = (Int(time * Double(width) / 8) % width) & ~1 // one bar width per second
        let period2 = 2 * width
        let origin = faceOrigin(at: time)
        let face = self.face
        backgroundLuma.withUnsafeBytes { luma in
            buffer.withUnsafeMutableBytes(ofPlane: 0) { dst, p in
                for row in 0..<height {
                    (dst.baseAddress! + row * p.bytesPerRow).copyMemory(from: luma.baseAddress! + row * period2 + shift, byteCount: width)
                }
                face.withUnsafeBytes(ofPlane: 0) { src, fp in
                    for row in 0..<fp.height {
                        (dst.baseAddress! + (origin.y + row) * p.bytesPerRow + origin.x)
                            .copyMemory(from: src.baseAddress! + row * fp.bytesPerRow, byteCount: fp.width)
                    }
                }
            }
        }
        backgroundChroma.withUnsafeBytes { chroma in
            buffer.withUnsafeMutableBytes(ofPlane: 1) { dst, p in
                for row in 0..<height / 2 {
                    (dst.baseAddress! + row * p.bytesPerRow).copyMemory(from: chroma.baseAddress! + row * period2 + shift, byteCount: width)
                }
                face.withUnsafeBytes(ofPlane: 1) { src, fp in
                    for row in 0..<fp.height {
                        (dst.baseAddress! + (origin.y / 2 + row) * p.bytesPerRow + origin.x)
                            .copyMemory(from: src.baseAddress! + row * fp.bytesPerRow, byteCount: fp.width * 2)
                    }
                }
            }
        }
    }

    /// What the controls do to the picture: zoom (a centred crop, scaled up by nearest
    /// neighbour), exposure × gain, brightness and contrast on luma, white balance on chroma.
    private func applyControls(to buffer: inout PixelBuffer) {
        let settings = controls.settings
        if settings.isNeutral { return }
        if settings != applied { makeTables(settings) }
        if settings.zoom > 100 { zoom(&buffer, factor: Double(settings.zoom) / 100) }
        let (width, height) = (self.width, self.height)
        lumaTable.withUnsafeBufferPointer { table in
            buffer.withUnsafeMutableBytes(ofPlane: 0) { dst, p in
                for row in 0..<height {
                    let line = dst.baseAddress!.advanced(by: row * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width { line[x] = table[Int(line[x])] }
                }
            }
        }
        guard settings.chromaShift != 0 else { return }
        chromaTable.cb.withUnsafeBufferPointer { cb in
            chromaTable.cr.withUnsafeBufferPointer { cr in
                buffer.withUnsafeMutableBytes(ofPlane: 1) { dst, p in
                    for row in 0..<height / 2 {
                        let line = dst.baseAddress!.advanced(by: row * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                        for x in stride(from: 0, to: width, by: 2) {
                            line[x] = cb[Int(line[x])]
                            line[x + 1] = cr[Int(line[x + 1])]
                        }
                    }
                }
            }
        }
    }

    private func makeTables(_ s: VirtualCameraControls.Settings) {
        applied = s
        let k = s.exposureFactor
        let contrast = Double(s.contrast) / 128
        let offset = Double(s.brightness - 128)
        lumaTable = (0...255).map { y in
            let exposed = 16 + (Double(y) - 16) * k
            return UInt8(max(0, min(255, ((exposed - 128) * contrast + 128 + offset).rounded())))
        }
        let shift = s.chromaShift
        chromaTable = (
            (0...255).map { UInt8(max(0, min(255, $0 + shift))) }, (0...255).map { UInt8(max(0, min(255, $0 - shift))) }
        )
    }

    /// Digital zoom in place: the centre 1/factor of each plane, scaled back to full size.
    private func zoom(_ buffer: inout PixelBuffer, factor: Double) {
        for plane in 0..<2 {
            let rows = plane == 0 ? height : height / 2
            let units = plane == 0 ? width : width / 2 // pixels, or Cb/Cr pairs
            let unitBytes = plane == 0 ? 1 : 2
            buffer.withUnsafeMutableBytes(ofPlane: plane) { dst, p in
                let rowBytes = units * unitBytes
                if zoomScratch.count < rows * rowBytes { zoomScratch = [UInt8](repeating: 0, count: rows * rowBytes) }
                zoomScratch.withUnsafeMutableBytes { scratch in
                    for row in 0..<rows {
                        (scratch.baseAddress! + row * rowBytes).copyMemory(
                            from: dst.baseAddress! + row * p.bytesPerRow, byteCount: rowBytes)
                    }
                    let cropRows = Double(rows) / factor
                    let cropUnits = Double(units) / factor
                    let top = (Double(rows) - cropRows) / 2
                    let left = (Double(units) - cropUnits) / 2
                    let columns = (0..<units).map { min(units - 1, Int(left + (Double($0) + 0.5) * cropUnits / Double(units))) }
                    let src = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    for row in 0..<rows {
                        let from = min(rows - 1, Int(top + (Double(row) + 0.5) * cropRows / Double(rows)))
                        let line = dst.baseAddress!.advanced(by: row * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                        let source = src + from * rowBytes
                        if unitBytes == 1 {
                            for x in 0..<units { line[x] = source[columns[x]] }
                        } else {
                            for x in 0..<units {
                                line[2 * x] = source[2 * columns[x]]
                                line[2 * x + 1] = source[2 * columns[x] + 1]
                            }
                        }
                    }
                }
            }
        }
    }

    /// A still at another size: rendered as this frame would be, at that size (the virtual
    /// camera need not stop its video for it).
    func captureStill(format: CaptureDeviceFormat, flash: Bool) throws(CaptureError) -> SampleBuffer {
        let still = try VirtualCameraSource(
            configuration: SourceConfiguration(
                format: format, pixelFormat: .nv12VideoRange, frameRate: configuration.frameRate, bufferCount: 1),
            controls: controls)
        let time = Double(tick) * frameDuration
        guard var buffer = still.pool.makeBuffer() else { throw .configuration("virtual camera: no buffer for a still") }
        still.render(into: &buffer, time: time)
        still.applyControls(to: &buffer)
        return SampleBuffer(pixelBuffer: buffer, presentationTime: time, sequenceNumber: tick, captureInstant: .now())
    }

    func stop() { pending.removeAll() }
}

/// The virtual camera's sources: one per run, sharing the device's controls.
struct VirtualCameraSourceFactory: FrameSourceFactory {
    let controls: VirtualCameraControls
    var isRealTime: Bool { true }
    func makeSource(configuration: SourceConfiguration) throws(CaptureError) -> any FrameSource {
        try VirtualCameraSource(configuration: configuration, controls: controls)
    }
}
