import FrameCore

/// A YUV4MPEG2 stream header: `YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg`.
struct Y4MHeader: Sendable {
    var size: FrameSize
    var frameRate: Double
    /// 4:2:0 streams are delivered as I420, 4:2:2 as YUYV, mono as GRAY8.
    var pixelFormat: PixelFormat
    /// Bytes of the stream header including its newline.
    var headerLength: Int
    /// Bytes of one frame's pixels as stored (planar).
    var frameBytes: Int

    init(parsing head: [UInt8], path: String) throws(CaptureError) {
        guard let newline = head.firstIndex(of: 0x0A) else {
            throw .unreadableFile(path: path, reason: "Y4M header has no end (or is longer than 4 KiB)")
        }
        let line = String(decoding: head[0..<newline], as: UTF8.self)
        var w = 0
        var h = 0
        var rate = 0.0
        var chroma = "420jpeg"
        for token in line.split(separator: " ").dropFirst() {
            let value = token.dropFirst()
            switch token.first {
            case "W": w = Int(value) ?? 0
            case "H": h = Int(value) ?? 0
            case "F":
                let parts = value.split(separator: ":").compactMap { Double($0) }
                if parts.count == 2, parts[1] > 0 { rate = parts[0] / parts[1] }
            case "C": chroma = String(value)
            case "I" where value != "p" && value != "?":
                throw .unreadableFile(path: path, reason: "interlaced Y4M (I\(value)) is not supported")
            default: break
            }
        }
        guard w > 0, h > 0, w <= 16384, h <= 16384 else { throw .unreadableFile(path: path, reason: "Y4M header has no valid W/H") }
        guard rate > 0 else { throw .unreadableFile(path: path, reason: "Y4M header has no valid frame rate (F)") }
        switch chroma {
        case "420", "420jpeg", "420paldv", "420mpeg2":
            pixelFormat = .i420
            frameBytes = w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)
        case "422":
            pixelFormat = .yuyv
            frameBytes = w * h + 2 * ((w + 1) / 2) * h
        case "mono":
            pixelFormat = .gray8
            frameBytes = w * h
        default:
            throw .unreadableFile(path: path, reason: "Y4M colour space C\(chroma) is not supported (420, 422 and mono are)")
        }
        guard w % pixelFormat.sizeAlignment.width == 0, h % pixelFormat.sizeAlignment.height == 0 else {
            throw .unreadableFile(path: path, reason: "Y4M \(w)x\(h) is not a size \(pixelFormat) can hold (odd)")
        }
        size = FrameSize(width: w, height: h)
        frameRate = rate
        headerLength = newline + 1
    }
}
