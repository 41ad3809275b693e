import Foundation
import FrameCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes Motion-JPEG in an AVI (RIFF) container with an idx1 index: what ffmpeg, VLC and
/// OpenCV play. Sizes and counts in the headers are patched when the file is closed.
///
/// A process that dies mid-recording leaves the frames written so far in a `movi` list, but no
/// `idx1` index and zero sizes in the headers: ffmpeg and VLC still play it (they scan `movi`),
/// OpenCV may not. Nothing already written is lost.
final class AVIWriter {
    private let handle: FileHandle
    private(set) var width = 0, height = 0, frameRate = 30.0
    private(set) var isOpen = false
    private(set) var frameCount = 0
    private(set) var bytesWritten = 0
    private var index: [(offset: UInt32, size: UInt32)] = []
    private var moviStart = 0 // offset of the "movi" fourcc
    private var riffSizeAt = 0, moviSizeAt = 0, totalFramesAt = 0, lengthAt = 0

    /// Writes to `fd`, a new empty file (``MovieFile/reserve(_:)``); the headers are written by
    /// ``open(width:height:frameRate:)`` once the first frame's size is known.
    init(fileDescriptor fd: Int32) {
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    func open(width: Int, height: Int, frameRate: Double) throws {
        precondition(!isOpen, "AVI headers written twice")
        self.width = width
        self.height = height
        self.frameRate = frameRate > 0 ? frameRate : 30
        try writeHeaders()
        isOpen = true
    }

    private func writeHeaders() throws {
        var d = Data()
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: v).littleEndian) { d.append(contentsOf: $0) } }
        func cc(_ s: String) { d.append(contentsOf: Array(s.utf8)) }
        let usPerFrame = Int((1_000_000 / frameRate).rounded())
        cc("RIFF")
        riffSizeAt = d.count
        u32(0)
        cc("AVI ")
        cc("LIST")
        u32(4 + 8 + 56 + 8 + 4 + 8 + 56 + 8 + 40)
        cc("hdrl")
        cc("avih")
        u32(56)
        u32(usPerFrame)
        u32(0)
        u32(0)
        u32(0x10) // AVIF_HASINDEX
        totalFramesAt = d.count
        u32(0)
        u32(0)
        u32(1)
        u32(0)
        u32(width)
        u32(height)
        u32(0)
        u32(0)
        u32(0)
        u32(0)
        cc("LIST")
        u32(4 + 8 + 56 + 8 + 40)
        cc("strl")
        cc("strh")
        u32(56)
        cc("vids")
        cc("MJPG")
        u32(0)
        u16(0)
        u16(0)
        u32(0)
        u32(usPerFrame)
        u32(1_000_000) // scale / rate = seconds per frame
        u32(0)
        lengthAt = d.count
        u32(0)
        u32(0)
        u32(0xFFFF_FFFF)
        u32(0)
        u16(0)
        u16(0)
        u16(width)
        u16(height)
        cc("strf")
        u32(40)
        u32(40)
        u32(width)
        u32(height)
        u16(1)
        u16(24)
        cc("MJPG")
        u32(width * height * 3)
        u32(0)
        u32(0)
        u32(0)
        u32(0)
        cc("LIST")
        moviSizeAt = d.count
        u32(0)
        moviStart = d.count
        cc("movi")
        try handle.write(contentsOf: d)
        bytesWritten = d.count
    }

    /// Appends one JPEG frame.
    func append(jpeg: [UInt8]) throws {
        var chunk = Data("00dc".utf8)
        withUnsafeBytes(of: UInt32(jpeg.count).littleEndian) { chunk.append(contentsOf: $0) }
        chunk.append(contentsOf: jpeg)
        if jpeg.count % 2 == 1 { chunk.append(0) } // RIFF chunks are word-aligned
        index.append((UInt32(bytesWritten - moviStart), UInt32(jpeg.count)))
        try handle.write(contentsOf: chunk)
        bytesWritten += chunk.count
        frameCount += 1
    }

    /// Writes the index, patches the headers and closes the file: a valid AVI.
    func close() throws {
        if !isOpen { try open(width: 2, height: 2, frameRate: 30) } // no frames: still a valid, empty AVI
        let moviSize = bytesWritten - moviStart
        var idx = Data("idx1".utf8)
        withUnsafeBytes(of: UInt32(index.count * 16).littleEndian) { idx.append(contentsOf: $0) }
        for entry in index {
            idx.append(contentsOf: Array("00dc".utf8))
            for v in [UInt32(0x10), entry.offset, entry.size] { withUnsafeBytes(of: v.littleEndian) { idx.append(contentsOf: $0) } }
        }
        try handle.write(contentsOf: idx)
        bytesWritten += idx.count
        func patch(_ at: Int, _ value: Int) throws {
            try handle.seek(toOffset: UInt64(at))
            try handle.write(contentsOf: withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { Data($0) })
        }
        try patch(riffSizeAt, bytesWritten - 8)
        try patch(moviSizeAt, moviSize)
        try patch(totalFramesAt, frameCount)
        try patch(lengthAt, frameCount)
        try handle.close()
    }
}
