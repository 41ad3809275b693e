#if canImport(Glibc)
import Glibc
#endif

extension JPEG {
    /// Finds the JPEGs in a byte stream (an MJPEG file) by walking their structure: the header
    /// segments by their lengths (so an EXIF thumbnail, a JPEG inside APP1, is skipped whole),
    /// then the entropy-coded data, where only two markers can end the frame: EOI, or an SOI
    /// (`FF D8 FF`, which valid entropy data never holds: the frame was cut short and the next
    /// begins). Other markers there (a progressive file's DHT and SOS) are not parsed, so a
    /// damaged frame's random bytes cannot make a bogus length swallow the next frame. Bytes
    /// between JPEGs (a newline, padding, a boundary) are skipped rather than glued onto a frame;
    /// a damaged JPEG is one frame (decoded as corrupt), and the next SOI starts the next. An SOI
    /// is `FF D8` followed by a marker (`FF`) everywhere: a damaged frame's random bytes hold
    /// `FF D8` pairs, which were counted as frames of their own.
    ///
    /// Fed in chunks at increasing offsets (``consume(_:at:)``), then ``finish(at:)``.
    package struct StreamSplitter {
        private enum State {
            case seekingStart(sawFF: Bool)
            case startFF // FF D8 seen: an SOI if a marker's FF follows
            case markerFF
            case markerCode
            case lengthHigh(scan: Bool)
            case lengthLow(high: Int, scan: Bool)
            case skipping(remaining: Int, scan: Bool)
            case entropy
            case entropyFF
            case entropySOI // FF D8 seen in entropy data: an SOI if FF follows
        }

        private var state = State.seekingStart(sawFF: false)
        private var frameStart = 0
        /// The frames found so far: each a byte range of the stream (the last one of a stream
        /// cut short, or a damaged one, will not decode: that is the caller's `corrupt` drop).
        package private(set) var frames: [Range<Int>] = []
        /// Bytes outside any JPEG (junk between frames, before the first, after the last).
        package private(set) var bytesBetweenFrames = 0

        package init() {}

        /// Takes the next chunk of the stream, which starts at byte `offset`.
        package mutating func consume(_ chunk: UnsafeRawBufferPointer, at offset: Int) {
            guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
            let count = chunk.count
            var i = 0
            while i < count {
                let b = base[i]
                switch state {
                case .seekingStart(let sawFF):
                    if sawFF && b == 0xD8 {
                        bytesBetweenFrames -= 1 // the FF was the SOI's
                        frameStart = offset + i - 1
                        state = .startFF
                    } else if b == 0xFF {
                        bytesBetweenFrames += 1
                        state = .seekingStart(sawFF: true)
                    } else {
                        // Junk: jump to the next FF.
                        let ff = memchr(base + i, 0xFF, count - i).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) }
                        bytesBetweenFrames += (ff ?? count) - i
                        i = ff ?? count
                        state = .seekingStart(sawFF: false)
                        continue
                    }
                case .startFF:
                    // FF D8 and no marker after it is not a JPEG's start (the rest of a damaged
                    // frame holds such pairs): junk, not a frame of two bytes.
                    if b == 0xFF {
                        state = .markerCode
                    } else {
                        bytesBetweenFrames += 2
                        state = .seekingStart(sawFF: false)
                        continue // this byte is looked at again as junk
                    }
                case .markerFF:
                    if b == 0xFF { state = .markerCode } else { broken(at: offset + i) }
                case .markerCode:
                    switch b {
                    case 0xFF: break // fill bytes before a marker
                    case 0xD9: end(at: offset + i + 1)
                    case 0xD8: restart(at: offset + i - 1)
                    case 0xD0...0xD7, 0x01: state = .markerFF // markers without a length
                    case 0x00: broken(at: offset + i)
                    default: state = .lengthHigh(scan: b == 0xDA)
                    }
                case .lengthHigh(let scan):
                    state = .lengthLow(high: Int(b), scan: scan)
                case .lengthLow(let high, let scan):
                    let length = high << 8 | Int(b)
                    if length < 2 {
                        broken(at: offset + i)
                    } else {
                        state = length == 2 ? (scan ? .entropy : .markerFF) : .skipping(remaining: length - 2, scan: scan)
                    }
                case .skipping(let remaining, let scan):
                    let n = min(remaining, count - i)
                    i += n
                    state = n == remaining ? (scan ? .entropy : .markerFF) : .skipping(remaining: remaining - n, scan: scan)
                    continue
                case .entropy:
                    // The bulk of a frame: jump to the next FF.
                    guard let ff = memchr(base + i, 0xFF, count - i) else {
                        i = count
                        continue
                    }
                    i = base.distance(to: ff.assumingMemoryBound(to: UInt8.self)) + 1
                    state = .entropyFF
                    continue
                case .entropyFF:
                    switch b {
                    case 0xFF: break
                    case 0xD9: end(at: offset + i + 1)
                    case 0xD8: state = .entropySOI
                    default: state = .entropy // stuffed FF, RSTn, or a marker between scans
                    }
                case .entropySOI:
                    if b == 0xFF {
                        restart(at: offset + i - 2)
                        state = .markerCode
                    } else {
                        state = .entropy
                    }
                }
                i += 1
            }
        }

        /// The stream ends at byte `end`: a JPEG still open there (cut short) is the last frame.
        package mutating func finish(at end: Int) {
            if case .seekingStart = state { return }
            if case .startFF = state { // FF D8 and the end: no frame
                bytesBetweenFrames += 2
                state = .seekingStart(sawFF: false)
                return
            }
            if end > frameStart { frames.append(frameStart..<end) }
            state = .seekingStart(sawFF: false)
        }

        private mutating func end(at position: Int) {
            frames.append(frameStart..<position)
            state = .seekingStart(sawFF: false)
        }

        /// An SOI inside a frame: the frame so far is one (damaged), and a new one starts here
        /// (if a marker follows the SOI).
        private mutating func restart(at position: Int) {
            if position > frameStart { frames.append(frameStart..<position) }
            frameStart = position
            state = .startFF
        }

        /// The structure broke at `position`: what came before is one damaged frame, and the
        /// search for the next SOI starts here.
        private mutating func broken(at position: Int) {
            frames.append(frameStart..<position)
            state = .seekingStart(sawFF: false)
        }
    }
}
