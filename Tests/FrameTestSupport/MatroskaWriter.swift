import Foundation

/// Hand-made Matroska files with any timestamps (one MJPEG track, one frame a cluster), for
/// input FFmpeg's own muxer would refuse to write: a jump to 2^62 time units, timestamps going
/// back. A minimal EBML writer: enough for libavformat's Matroska demuxer.
public enum MatroskaWriter {
    /// Writes `jpeg` as the frame at each of `times` (in units of `timecodeScale` ns).
    public static func write(
        _ url: URL, jpeg: Data, times: [UInt64], timecodeScale: UInt64 = 1_000_000, width: UInt64 = 320, height: UInt64 = 240
    ) throws {
        let header = element(
            0x1A45_DFA3,
            uint(0x4286, 1) + uint(0x42F7, 1) + uint(0x42F2, 4) + uint(0x42F3, 8) + string(0x4282, "matroska")
                + uint(0x4287, 4) + uint(0x4285, 2))
        let info = element(0x1549_A966, uint(0x2A_D7B1, timecodeScale) + string(0x4D80, "framekit") + string(0x5741, "framekit"))
        let video = element(0xE0, uint(0xB0, width) + uint(0xBA, height))
        let track = element(
            0xAE,
            uint(0xD7, 1) + uint(0x73C5, 1) + uint(0x83, 1) + string(0x86, "V_MJPEG") + uint(0x23_E383, 33_333_333) + video)
        var clusters = Data()
        for time in times {
            // SimpleBlock: track 1, relative time 0, key frame.
            let block = Data([0x81, 0x00, 0x00, 0x80]) + jpeg
            clusters += element(0x1F43_B675, uint(0xE7, time) + element(0xA3, block))
        }
        let segment = element(0x1853_8067, info + element(0x1654_AE6B, track) + clusters)
        try (header + segment).write(to: url)
    }

    static func element(_ id: UInt32, _ payload: Data) -> Data {
        var idBytes = Data()
        var shift = (32 - id.leadingZeroBitCount + 7) / 8 * 8
        while shift > 0 {
            shift -= 8
            idBytes.append(UInt8(truncatingIfNeeded: id >> UInt32(shift)))
        }
        return idBytes + size(payload.count) + payload
    }

    /// An EBML variable-length size: the shortest length whose all-ones value it is not.
    static func size(_ n: Int) -> Data {
        var length = 1
        while UInt64(n) >= (UInt64(1) << UInt64(7 * length)) - 1 { length += 1 }
        var bytes = [UInt8](repeating: 0, count: length)
        var value = UInt64(n)
        for i in stride(from: length - 1, through: 0, by: -1) {
            bytes[i] = UInt8(truncatingIfNeeded: value)
            value >>= 8
        }
        bytes[0] |= UInt8(0x80 >> (length - 1))
        return Data(bytes)
    }

    static func uint(_ id: UInt32, _ value: UInt64) -> Data {
        var bytes = Data()
        var shift = max(8, (64 - value.leadingZeroBitCount + 7) / 8 * 8)
        while shift > 0 {
            shift -= 8
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
        return element(id, bytes)
    }

    static func string(_ id: UInt32, _ text: String) -> Data { element(id, Data(text.utf8)) }
}
