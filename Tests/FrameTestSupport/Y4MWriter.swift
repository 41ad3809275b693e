import Foundation
import FrameKit

/// Writes YUV4MPEG2 test clips whose pixels are a known function of frame and position.
public enum Y4MWriter {
    /// Luma of `frame` at (x, y).
    public static func luma(frame: Int, x: Int, y: Int) -> UInt8 { UInt8(truncatingIfNeeded: 16 + (frame * 7 + x + 2 * y) % 200) }
    public static func cb(frame: Int) -> UInt8 { UInt8(truncatingIfNeeded: 60 + frame * 3) }
    public static func cr(frame: Int) -> UInt8 { UInt8(truncatingIfNeeded: 180 - frame * 3) }

    /// `chroma` is "420jpeg", "422" or "mono". `truncateLastBy` cuts bytes off the last frame.
    public static func write(
        frames: Int, width: Int, height: Int, chroma: String = "420jpeg", rate: String = "30:1",
        truncateLastBy: Int = 0, to url: URL
    ) throws {
        var data = Data("YUV4MPEG2 W\(width) H\(height) F\(rate) Ip A1:1 C\(chroma)\n".utf8)
        let (cw, ch) = chroma == "422" ? (width / 2, height) : (width / 2, height / 2)
        for f in 0..<frames {
            data.append(contentsOf: Array("FRAME\n".utf8))
            var frame = [UInt8]()
            for y in 0..<height { for x in 0..<width { frame.append(luma(frame: f, x: x, y: y)) } }
            if chroma != "mono" {
                frame += [UInt8](repeating: cb(frame: f), count: cw * ch)
                frame += [UInt8](repeating: cr(frame: f), count: cw * ch)
            }
            if f == frames - 1 && truncateLastBy > 0 { frame.removeLast(truncateLastBy) }
            data.append(contentsOf: frame)
        }
        try data.write(to: url)
    }
}
