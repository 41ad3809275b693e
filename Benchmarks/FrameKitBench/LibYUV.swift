import CLibYUV
import FrameKit

/// libyuv (Chrome's and WebRTC's converter, which dispatches SSSE3/AVX2 itself) on FrameKit's
/// buffers: the benchmark's second same-run baseline, for the operations libyuv has.
/// libyuv's ARGB is B, G, R, A in memory (FrameKit's BGRA); its RAW is R, G, B (FrameKit's RGB24).
enum LibYUV {
    typealias Run = @Sendable (PixelBuffer, inout PixelBuffer) throws -> Void

    static func plane(_ b: PixelBuffer, _ i: Int) -> (UnsafePointer<UInt8>, Int32) {
        b.withUnsafeBytes(ofPlane: i) { bytes, p in (bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(p.bytesPerRow)) }
    }

    static func output(_ b: inout PixelBuffer, _ body: (UnsafeMutablePointer<UInt8>, Int32) -> Void) {
        b.withUnsafeMutableBytes(ofPlane: 0) { bytes, p in
            body(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(p.bytesPerRow))
        }
    }

    /// A libyuv call from one plane to one: (source, stride, output, stride, width, height).
    typealias PlaneCall = @Sendable (UnsafePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32) -> Int32

    /// A run of `call` from the source's first plane to the output's, at the source's size.
    static func packed(_ call: @escaping PlaneCall) -> Run {
        { s, d in
            let p = plane(s, 0)
            output(&d) { o, os in _ = call(p.0, p.1, o, os, Int32(s.width), Int32(s.height)) }
        }
    }

    /// A libyuv call from NV12's two planes to one: (luma, stride, chroma, stride, output, stride, width, height).
    typealias NV12Call =
        @Sendable (
            UnsafePointer<UInt8>?, Int32, UnsafePointer<UInt8>?, Int32, UnsafeMutablePointer<UInt8>?, Int32, Int32, Int32
        ) -> Int32

    static func fromNV12(_ call: @escaping NV12Call) -> Run {
        { s, d in
            let (y, uv) = (plane(s, 0), plane(s, 1))
            output(&d) { o, os in _ = call(y.0, y.1, uv.0, uv.1, o, os, Int32(s.width), Int32(s.height)) }
        }
    }

    /// The libyuv call for a benchmark case, or nil when libyuv has no such operation.
    static func run(for name: String) -> Run? {
        switch name {
        case "nv12-to-gray":
            return { s, d in
                let y = plane(s, 0)
                output(&d) { o, os in CopyPlane(y.0, y.1, o, os, Int32(s.width), Int32(s.height)) }
            }
        case "yuyv-to-gray": return packed(YUY2ToY)
        case "bgra-to-gray": return packed(ARGBToJ400)
        case "rgb-to-gray": return packed(RAWToJ400)
        case "nv12-to-bgra": return fromNV12(NV12ToARGB)
        case "nv12-to-rgb": return fromNV12(NV12ToRAW)
        case "i420-to-rgb":
            return { s, d in
                let (y, u, v) = (plane(s, 0), plane(s, 1), plane(s, 2))
                output(&d) { o, os in _ = I420ToRAW(y.0, y.1, u.0, u.1, v.0, v.1, o, os, Int32(s.width), Int32(s.height)) }
            }
        case "yuyv-to-bgra": return packed(YUY2ToARGB)
        case "rgb-to-i420":
            return { s, d in
                let p = plane(s, 0)
                d.withUnsafeMutablePlanes { o in
                    func out(_ i: Int) -> (UnsafeMutablePointer<UInt8>, Int32) {
                        (o[i].base.assumingMemoryBound(to: UInt8.self), Int32(o[i].plane.bytesPerRow))
                    }
                    let (y, u, v) = (out(0), out(1), out(2))
                    _ = RAWToI420(p.0, p.1, y.0, y.1, u.0, u.1, v.0, v.1, Int32(s.width), Int32(s.height))
                }
            }
        case "bgra-to-nv12":
            return { s, d in
                let p = plane(s, 0)
                d.withUnsafeMutablePlanes { o in
                    let (y, uv) = (o[0], o[1])
                    _ = ARGBToNV12(
                        p.0, p.1, y.base.assumingMemoryBound(to: UInt8.self), Int32(y.plane.bytesPerRow),
                        uv.base.assumingMemoryBound(to: UInt8.self), Int32(uv.plane.bytesPerRow), Int32(s.width), Int32(s.height))
                }
            }
        case "resize-area-half", "resize-area-0.375", "resize-area-0.625", "resize-bilinear-0.5", "resize-bilinear-0.625",
            "resize-bilinear-0.75":
            let filter = name.hasPrefix("resize-area") ? kFilterBox : kFilterBilinear
            return { s, d in
                let p = plane(s, 0)
                let (w, h) = (Int32(d.width), Int32(d.height))
                output(&d) { o, os in ScalePlane(p.0, p.1, Int32(s.width), Int32(s.height), o, os, w, h, filter) }
            }
        case "rotate-90-gray":
            return { s, d in
                let p = plane(s, 0)
                output(&d) { o, os in _ = RotatePlane(p.0, p.1, o, os, Int32(s.width), Int32(s.height), kRotate90) }
            }
        case "mirror-bgra": return packed(ARGBMirror)
        default:
            return nil
        }
    }
}
