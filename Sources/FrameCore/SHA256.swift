import Foundation

/// SHA-256 (FIPS 180-4), for checking a shipped file against the digest it was shipped with
/// (the models of Models/MANIFEST.json). Foundation on Linux has no digest of its own and
/// FrameKit links no crypto library for one checksum.
package enum SHA256 {
    /// The digest of `bytes` as 64 lowercase hex digits.
    package static func hex(of bytes: UnsafeRawBufferPointer) -> String {
        var state = State()
        let whole = bytes.count / 64 * 64
        if let base = bytes.baseAddress {
            for offset in stride(from: 0, to: whole, by: 64) { state.compress(base + offset) }
        }
        // The padding: a 1 bit, zeros, and the message's length in bits as a big-endian UInt64.
        var tail = [UInt8](bytes[whole...])
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bits = UInt64(bytes.count) &* 8
        for i in 0..<8 { tail.append(UInt8(truncatingIfNeeded: bits >> (56 - 8 * UInt64(i)))) }
        tail.withUnsafeBytes { t in
            for offset in stride(from: 0, to: t.count, by: 64) { state.compress(t.baseAddress! + offset) }
        }
        return state.words.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }.joined()
    }

    package static func hex(of data: Data) -> String { data.withUnsafeBytes { hex(of: $0) } }

    /// The digest of the file at `path` (mapped, not copied, where the system allows).
    package static func hex(ofFileAt path: String) throws -> String {
        hex(of: try Data(contentsOf: URL(fileURLWithPath: path), options: .mappedIfSafe))
    }

    /// The eight working words, and one 64-byte block at a time folded into them. Plain values
    /// and a fixed-size message schedule: no array (with its bounds checks and copies) per block,
    /// so the shipped model's 7 MB hash in a few tens of milliseconds, not a tenth of a second.
    private struct State {
        var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19

        var words: [UInt32] { [h0, h1, h2, h3, h4, h5, h6, h7] }

        mutating func compress(_ block: UnsafeRawPointer) {
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
                for i in 16..<64 {
                    let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                    let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                    w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                }
                var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                SHA256.roundConstants.withUnsafeBufferPointer { k in
                    for i in 0..<64 {
                        let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                        let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                }
                h0 &+= a
                h1 &+= b
                h2 &+= c
                h3 &+= d
                h4 &+= e
                h5 &+= f
                h6 &+= g
                h7 &+= h
            }
        }
    }

    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2
    ]

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
}
