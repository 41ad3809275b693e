import CTurboJPEG
import FrameCore
import FramePixels

/// JPEG through libjpeg-turbo's TurboJPEG API.
public enum JPEG {
    /// What a JPEG's header says, read without decoding.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var isGrayscale: Bool
        /// TurboJPEG's TJSAMP value (chroma subsampling).
        var subsampling: Int32 = 0
    }

    /// A reusable decoder (one libjpeg-turbo handle). Not for use from two threads at once.
    ///
    /// It keeps the planes a frame is decoded to on its way to a Y'CbCr buffer: new planes for
    /// each frame of a video were zero-filled and page-faulted in again every frame (2–3% of an
    /// MJPEG clip's CPU in `framekit detect`).
    public final class Decoder {
        private let handle: tjhandle
        private var planes: PlanarYCbCr?

        public init() throws(ImageIOError) {
            guard let handle = tjInitDecompress() else { throw .jpeg("tjInitDecompress failed") }
            self.handle = handle
        }

        deinit { tjDestroy(handle) }

        public func header(of data: UnsafeRawBufferPointer) throws(ImageIOError) -> Header {
            guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count > 0 else {
                throw .jpeg("empty data")
            }
            var width: Int32 = 0
            var height: Int32 = 0
            var subsampling: Int32 = 0
            var colorspace: Int32 = 0
            if tjDecompressHeader3(handle, base, UInt(data.count), &width, &height, &subsampling, &colorspace) != 0 {
                throw failure()
            }
            // libjpeg-turbo accepts a start-of-image marker followed by garbage as a 0x0 image.
            guard width > 0, height > 0 else { throw .jpeg("no image size in the data: a JPEG header without a frame") }
            return Header(
                width: Int(width), height: Int(height), isGrayscale: subsampling == Int32(TJSAMP_GRAY.rawValue),
                subsampling: subsampling)
        }

        /// Decodes into a new buffer of `format` (any FrameKit format). Y'CbCr targets are
        /// decoded to planes without an RGB round trip. Warnings (damaged data) throw
        /// ``ImageIOError/jpegWarning(_:)``.
        public func decode(_ data: UnsafeRawBufferPointer, to format: PixelFormat? = nil) throws(ImageIOError) -> PixelBuffer {
            let header = try header(of: data)
            let target = format ?? (header.isGrayscale ? .gray8 : .rgb24)
            var buffer: PixelBuffer
            do { buffer = try PixelBuffer(width: header.width, height: header.height, format: target) } catch {
                throw .pixelBuffer(error)
            }
            try decode(data, into: &buffer)
            return buffer
        }

        /// Decodes into an existing buffer of the image's size (a pool buffer, say).
        public func decode(_ data: UnsafeRawBufferPointer, into buffer: inout PixelBuffer) throws(ImageIOError) {
            let header = try header(of: data)
            guard header.width == buffer.width, header.height == buffer.height else {
                throw .pixelBuffer(
                    .sizeMismatch(
                        expected: "\(buffer.width)x\(buffer.height)",
                        actual: "\(header.width)x\(header.height)"))
            }
            let base = data.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let flags = Int32(ctj_FLAG_ACCURATEDCT)
            let packed: TJPF?
            switch buffer.format {
            case .rgb24: packed = TJPF_RGB
            case .bgra32: packed = TJPF_BGRA
            case .gray8: packed = TJPF_GRAY
            case .nv12VideoRange, .nv12FullRange, .i420, .yuyv: packed = nil
            }
            if let packed {
                let status = buffer.withUnsafeMutableBytes(ofPlane: 0) { bytes, p in
                    tjDecompress2(
                        handle, base, UInt(data.count), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                        Int32(header.width), Int32(p.bytesPerRow), Int32(header.height),
                        Int32(packed.rawValue), flags)
                }
                if status != 0 { throw failure() }
                return
            }
            let subsampling = header.subsampling
            let w = Int32(header.width)
            let h = Int32(header.height)
            let isGray = header.isGrayscale
            let cw = isGray ? 1 : Int(tjPlaneWidth(1, w, subsampling))
            let ch = isGray ? 1 : Int(tjPlaneHeight(1, h, subsampling))
            // Taken out while in use, so that its arrays are not shared (no copy on write).
            var planes = self.planes ?? PlanarYCbCr(width: header.width, height: header.height, chromaWidth: cw, chromaHeight: ch)
            self.planes = nil
            if planes.width != header.width || planes.height != header.height || planes.chromaWidth != cw || planes.chromaHeight != ch {
                planes = PlanarYCbCr(width: header.width, height: header.height, chromaWidth: cw, chromaHeight: ch)
            }
            defer { self.planes = planes }
            if isGray { (planes.cb[0], planes.cr[0]) = (128, 128) } // neutral chroma (a colour image's before)
            let status: Int32 = planes.y.withUnsafeMutableBufferPointer { yp in
                planes.cb.withUnsafeMutableBufferPointer { cbp in
                    planes.cr.withUnsafeMutableBufferPointer { crp in
                        var pointers: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, cbp.baseAddress, crp.baseAddress]
                        var strides: [Int32] = [Int32(header.width), Int32(cw), Int32(cw)]
                        return pointers.withUnsafeMutableBufferPointer { pp in
                            tjDecompressToYUVPlanes(handle, base, UInt(data.count), pp.baseAddress, w, &strides, h, flags)
                        }
                    }
                }
            }
            if status != 0 { throw failure() }
            do { try planes.write(into: &buffer) } catch { throw .pixelBuffer(error) }
        }

        private func failure() -> ImageIOError {
            let message = String(cString: tjGetErrorStr2(handle))
            return tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue) ? .jpegWarning(message) : .jpeg(message)
        }
    }

    /// A reusable encoder (one libjpeg-turbo handle). Not for use from two threads at once.
    ///
    /// It keeps its working memory between frames — the planes a Y'CbCr frame is split into and
    /// an output buffer of libjpeg-turbo's worst-case size — so encoding a stream allocates only
    /// the returned bytes: a few megabytes allocated and freed per frame made glibc raise its
    /// mmap threshold and fragment the heap (the preview grew ~12 MB a minute).
    public final class Encoder {
        private let handle: tjhandle
        private var planes: PlanarYCbCr?
        private var output: (pointer: UnsafeMutablePointer<UInt8>, capacity: UInt)?

        public init() throws(ImageIOError) {
            guard let handle = tjInitCompress() else { throw .jpeg("tjInitCompress failed") }
            self.handle = handle
        }

        deinit {
            if let output { tjFree(output.pointer) }
            tjDestroy(handle)
        }

        /// The reused output buffer, grown to libjpeg-turbo's bound for this size and subsampling.
        private func outputBuffer(width: Int, height: Int, subsampling: TJSAMP) throws(ImageIOError) -> (
            pointer: UnsafeMutablePointer<UInt8>, capacity: UInt
        ) {
            let bound = tjBufSize(Int32(width), Int32(height), Int32(subsampling.rawValue))
            guard bound != UInt.max, bound <= UInt(Int32.max) else { throw .jpeg("\(width)x\(height) is too large to encode") }
            if let output, output.capacity >= bound { return output }
            if let output { tjFree(output.pointer) }
            output = nil
            guard let pointer = tjAlloc(Int32(bound)) else { throw .jpeg("cannot allocate \(bound) bytes for the JPEG") }
            output = (pointer, bound)
            return (pointer, bound)
        }

        /// Encodes `buffer` (any FrameKit format) at `quality` 1…100. Y'CbCr buffers are encoded
        /// from their planes (4:2:0 or 4:2:2) without an RGB round trip.
        public func encode(_ buffer: PixelBuffer, quality: Int = 90) throws(ImageIOError) -> [UInt8] {
            precondition((1...100).contains(quality), "JPEG quality is 1…100")
            // NOREALLOC: libjpeg-turbo writes into our buffer, sized to its bound, never its own.
            let flags = Int32(ctj_FLAG_ACCURATEDCT | ctj_FLAG_NOREALLOC)
            let status: Int32
            var destination: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            switch buffer.format {
            case .rgb24, .bgra32, .gray8:
                let (pf, samp): (TJPF, TJSAMP) =
                    switch buffer.format {
                    case .rgb24: (TJPF_RGB, TJSAMP_420)
                    case .bgra32: (TJPF_BGRA, TJSAMP_420)
                    default: (TJPF_GRAY, TJSAMP_GRAY)
                    }
                let out = try outputBuffer(width: buffer.width, height: buffer.height, subsampling: samp)
                (destination, size) = (out.pointer, out.capacity)
                status = buffer.withUnsafeBytes(ofPlane: 0) { bytes, p in
                    tjCompress2(
                        handle, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.width),
                        Int32(p.bytesPerRow), Int32(buffer.height), Int32(pf.rawValue), &destination, &size,
                        Int32(samp.rawValue), Int32(quality), flags)
                }
            case .nv12VideoRange, .nv12FullRange, .i420, .yuyv:
                var planes = self.planes ?? PlanarYCbCr(width: 0, height: 0, chromaWidth: 0, chromaHeight: 0)
                self.planes = nil // uniquely held while it is filled: no copy-on-write
                defer { self.planes = planes }
                do { try planes.read(buffer) } catch { throw .pixelBuffer(error) }
                let samp = buffer.format == .yuyv ? TJSAMP_422 : TJSAMP_420
                let out = try outputBuffer(width: buffer.width, height: buffer.height, subsampling: samp)
                (destination, size) = (out.pointer, out.capacity)
                let cw = planes.chromaWidth
                status = planes.y.withUnsafeBufferPointer { yp in
                    planes.cb.withUnsafeBufferPointer { cbp in
                        planes.cr.withUnsafeBufferPointer { crp in
                            var pointers: [UnsafePointer<UInt8>?] = [yp.baseAddress, cbp.baseAddress, crp.baseAddress]
                            var strides: [Int32] = [Int32(buffer.width), Int32(cw), Int32(cw)]
                            return pointers.withUnsafeMutableBufferPointer { pp in
                                tjCompressFromYUVPlanes(
                                    handle, pp.baseAddress, Int32(buffer.width), &strides,
                                    Int32(buffer.height), Int32(samp.rawValue), &destination, &size,
                                    Int32(quality), flags)
                            }
                        }
                    }
                }
            }
            guard status == 0, let destination else { throw .jpeg(String(cString: tjGetErrorStr2(handle))) }
            return Array(UnsafeBufferPointer(start: destination, count: Int(size)))
        }
    }

    /// Decodes JPEG bytes (convenience over ``Decoder``).
    public static func decode(_ bytes: [UInt8], to format: PixelFormat? = nil) throws(ImageIOError) -> PixelBuffer {
        let decoder = try Decoder()
        do {
            return try bytes.withUnsafeBytes { raw in try decoder.decode(raw, to: format) }
        } catch let error as ImageIOError {
            throw error
        } catch {
            preconditionFailure("decode throws only ImageIOError")
        }
    }

    /// Encodes a buffer as JPEG bytes (convenience over ``Encoder``).
    public static func encode(_ buffer: PixelBuffer, quality: Int = 90) throws(ImageIOError) -> [UInt8] {
        try Encoder().encode(buffer, quality: quality)
    }

    /// Reads the header of JPEG bytes without decoding the pixels.
    public static func header(of bytes: [UInt8]) throws(ImageIOError) -> Header {
        let decoder = try Decoder()
        do {
            return try bytes.withUnsafeBytes { raw in try decoder.header(of: raw) }
        } catch let error as ImageIOError {
            throw error
        } catch {
            preconditionFailure("header(of:) throws only ImageIOError")
        }
    }

    /// Whether `bytes` start like a JPEG (SOI marker).
    public static func hasSignature(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.makeIterator()
        return i.next() == 0xFF && i.next() == 0xD8
    }
}
